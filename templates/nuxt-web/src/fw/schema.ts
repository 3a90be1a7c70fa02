import { defineSchema, t, table } from 'fwjs';

const schema = defineSchema({
  // Tenant-scoped (the default): every row belongs to the caller's tenant, enforced by the database.
  notes: table(
    {
      id: t.uuid().primaryKey().defaultRandom(),
      title: t.text(),
      body: t.text().nullable(),
      author_id: t.text(),
      created_at: t.timestamptz().defaultNow(),
    },
    { indexes: [{ columns: ['created_at'] }] },
  ),
});

export default schema;

declare module 'fwjs' {
  interface Register {
    schema: typeof schema;
  }
}

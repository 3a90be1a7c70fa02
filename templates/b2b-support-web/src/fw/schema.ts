import { defineSchema, t, table } from 'fwjs';

export const ticketStatuses = ['open', 'pending', 'closed'] as const;
export const ticketPriorities = ['low', 'normal', 'high', 'urgent'] as const;
/** Who chose a ticket's priority: nobody yet (the default), the person who opened it, or the AI triage. */
export const prioritySources = ['default', 'user', 'triage'] as const;

const schema = defineSchema({
  // Both tables are tenant-scoped (the default): each customer organisation is a tenant, and the
  // database's row-level security keeps every ticket and comment inside it.
  tickets: table(
    {
      id: t.uuid().primaryKey().defaultRandom(),
      subject: t.text(),
      body: t.text(),
      status: t.enum(ticketStatuses).default('open'),
      priority: t.enum(ticketPriorities).default('normal'),
      priority_source: t.enum(prioritySources).default('default'),
      // Written once by the triageTicket action after the ticket is created.
      triage_summary: t.text().nullable(),
      triaged_at: t.timestamptz().nullable(),
      assignee: t.text().nullable(),
      created_by: t.text(),
      created_at: t.timestamptz().defaultNow(),
      updated_at: t.timestamptz().defaultNow(),
    },
    { indexes: [{ columns: ['status', 'created_at'] }] },
  ),
  comments: table(
    {
      id: t.uuid().primaryKey().defaultRandom(),
      ticket_id: t.uuid().references('tickets', 'id', { onDelete: 'cascade' }),
      body: t.text(),
      author: t.text(),
      created_at: t.timestamptz().defaultNow(),
    },
    { indexes: [{ columns: ['ticket_id', 'created_at'] }] },
  ),
});

export default schema;

declare module 'fwjs' {
  interface Register {
    schema: typeof schema;
  }
}

import { defineSchema, t, table } from 'fwjs';

/** `open`: the team's turn; `pending`: waiting for the customer; `closed`: done. */
export const ticketStatuses = ['open', 'pending', 'closed'] as const;
export const ticketPriorities = ['low', 'normal', 'high', 'urgent'] as const;
/** Who chose a ticket's priority: nobody yet (the default), the person who opened it, or the AI triage. */
export const prioritySources = ['default', 'user', 'triage'] as const;
/** Who wrote a comment: the support team, the customer (logged by an agent), or the desk itself. */
export const commentAuthors = ['agent', 'customer', 'system'] as const;

/** What a signed-in person may do (src/policies.ts): agents work tickets, admins also assign them and add people. */
export const userRoles = ['agent', 'admin'] as const;

/** A new ticket that is still `open` this long after it was opened has missed its first-response SLA. */
export const SLA_FIRST_RESPONSE_MS = 4 * 3600_000;

const schema = defineSchema({
  // Every table is tenant-scoped (the default): each customer organisation is a tenant, and the
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
      // Set by the checkSla action when the ticket was still open when its SLA ran out.
      sla_breached_at: t.timestamptz().nullable(),
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
      author_kind: t.enum(commentAuthors).default('agent'),
      created_at: t.timestamptz().defaultNow(),
    },
    { indexes: [{ columns: ['ticket_id', 'created_at'] }] },
  ),
  // The people who sign in to a workspace (src/endpoints/signIn.ts). Tenant-scoped like everything
  // else: an email is looked up inside the workspace the sign-in names, never across workspaces. The
  // password is stored as a scrypt hash with its own salt (src/auth/passwords.ts), never in clear. An
  // email is unique within its workspace (fw makes a tenant table's unique index per tenant), so two
  // concurrent addUser calls cannot both add it, and another workspace may have the same person.
  users: table(
    {
      id: t.uuid().primaryKey().defaultRandom(),
      email: t.text(),
      name: t.text(),
      role: t.enum(userRoles).default('agent'),
      password_hash: t.text(),
      created_at: t.timestamptz().defaultNow(),
    },
    { indexes: [{ columns: ['email'], unique: true }] },
  ),
  // Wrong passwords for an email of the workspace in the last minutes (src/auth/sign-in-limits.ts): past
  // the limit, sign-in answers 429 until the oldest is old enough. Unknown emails count too, so the
  // answer never tells which emails exist.
  sign_in_failures: table(
    {
      id: t.uuid().primaryKey().defaultRandom(),
      email: t.text(),
      /** Who tried (ctx.clientAddress; an IPv6 one's /64), for the limit per address. */
      address: t.text().nullable(),
      failed_at: t.timestamptz(),
    },
    { indexes: [{ columns: ['email', 'failed_at'] }, { columns: ['address', 'failed_at'] }, { columns: ['failed_at'] }] },
  ),
  // One row per night per tenant, written by the nightlyDigest cron (src/crons.ts).
  digests: table({
    id: t.uuid().primaryKey().defaultRandom(),
    open_count: t.integer(),
    pending_count: t.integer(),
    breached_count: t.integer(),
    created_at: t.timestamptz().defaultNow(),
  }),
});

export default schema;

declare module 'fwjs' {
  interface Register {
    schema: typeof schema;
  }
}

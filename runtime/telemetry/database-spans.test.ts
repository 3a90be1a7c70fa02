import { describe, expect, it } from 'vitest';
import { rawStatement } from './database-spans.ts';

describe('a raw statement’s span name', () => {
  it('is its operation and the table it names; a WITH that writes is named by its write', () => {
    expect(rawStatement('select count(*)::int as n from "notes" where tenant_id = $1')).toEqual({ operation: 'SELECT', table: 'notes' });
    expect(rawStatement('insert into "public"."_fw_workflow_runs" as r (id) values ($1) on conflict (id) do update set status = $2')).toEqual({ operation: 'INSERT', table: '_fw_workflow_runs' });
    expect(rawStatement('update "public"."_fw_outbox" set available_at = now() where id = $1')).toEqual({ operation: 'UPDATE', table: '_fw_outbox' });
    expect(rawStatement('delete from notes where id = $1')).toEqual({ operation: 'DELETE', table: 'notes' });
    expect(rawStatement('with inserted as (insert into "public"."_fw_workflow_steps" (run_id) values ($1) returning output) select output from inserted')).toEqual({ operation: 'INSERT', table: '_fw_workflow_steps' });
    expect(rawStatement('with recent as (select * from tickets) select * from recent')).toEqual({ operation: 'SELECT', table: 'tickets' });
    expect(rawStatement('select "_fw"."enqueue"($1, $2)')).toEqual({ operation: 'SELECT', table: '_fw.enqueue' });
    expect(rawStatement('set local role fw_app')).toEqual({ operation: 'SET' });
  });

  it('never takes a name from a value: string literals are blanked first', () => {
    expect(rawStatement("select 'from secret_table' as x")).toEqual({ operation: 'SELECT' });
    expect(rawStatement("select * from notes where title = 'insert into secrets'")).toEqual({ operation: 'SELECT', table: 'notes' });
  });
});

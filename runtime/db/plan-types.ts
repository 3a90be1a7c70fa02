import type { Schema } from '../core/schema.ts';
import type { DbModel } from './introspect.ts';

// The vocabulary of a migration plan, shared by plan.ts (the whole schema) and diff-table.ts (one
// table) without either importing the other's types.

export type ChangeKind =
  | 'create_enum'
  | 'add_enum_value'
  | 'create_table'
  | 'add_column'
  | 'drop_not_null'
  | 'set_default'
  | 'drop_default'
  | 'create_index'
  | 'drop_index'
  | 'enable_tenant_policy'
  | 'enable_identity_policy'
  | 'drop_table'
  | 'drop_column'
  | 'scope_unique'
  | 'add_tenant_key'
  | 'drop_foreign_key'
  | 'add_foreign_key';

export interface PlannedChange {
  kind: ChangeKind;
  table?: string;
  column?: string;
  description: string;
  sql: string[];
  destructive: boolean;
}

export interface DiffInput {
  schema: Schema;
  actual: DbModel;
  desired: DbModel;
  acceptDataLoss: boolean;
  /** Rows in a live table, counted up to 2. */
  rowCount(table: string): Promise<number>;
  /** Rows of `table` whose `column` names a row of `refTable` (by `refColumn`) in another tenant, counted up to 2. */
  crossTenantReferences(table: string, column: string, refTable: string, refColumn: string): Promise<number>;
}

export type AddChange = (change: Omit<PlannedChange, 'destructive'> & { destructive?: boolean }) => void;

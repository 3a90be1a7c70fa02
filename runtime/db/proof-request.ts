/**
 * A statement parameter that fw fills in, when the statement is sent, with the proof that fw itself asked
 * for it in this request transaction (request-identity.ts, `transactionProof`): how the SECURITY DEFINER
 * functions that write durable work (`_fw.enqueue`, `_fw.cancel_call`, `_fw.settle_call`) tell fw's own
 * statements from handler SQL in the same transaction. The proof names the transaction's claim, which is
 * known only once the transaction has begun (request-transaction.ts resolves it then); the message is what
 * the statement does, so a proof fits no other statement.
 *
 * @example
 *   await sql`select "_fw"."enqueue"(${rows}, ${proofOf('enqueue', rows)})`.execute(trx);
 */
export class ProofRequest {
  readonly purpose: string;
  readonly message: string;
  constructor(purpose: string, message: string) {
    this.purpose = purpose;
    this.message = message;
  }
}

export function proofOf(purpose: string, message: string): ProofRequest {
  return new ProofRequest(purpose, message);
}

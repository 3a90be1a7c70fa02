// @vitest-environment happy-dom
import { cleanup, configure, fireEvent, render, screen } from '@testing-library/react';
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTicketsRuntime, type Ticket } from '../../e2e/support/tickets-service.ts';
import type { ExternalRef } from '../api-types.ts';
import { createFwReact } from './index.ts';

const PAGE_ORIGIN = 'http://localhost:3000';
configure({ asyncUtilTimeout: 30_000 });


// Written by hand in the generator's shape (api-module.ts), typed by the manifest's schemas.
const api = {
  commands: {},
  queries: {},
  liveQueries: {},
  external: {
    tickets: {
      commands: {
        createTicket: { kind: 'command', service: 'tickets', name: 'createTicket', qualifiedName: 'tickets.createTicket' } as ExternalRef<'command', { subject: string }, Ticket>,
      },
      queries: {
        listTickets: { kind: 'query', service: 'tickets', name: 'listTickets', qualifiedName: 'tickets.listTickets' } as ExternalRef<'query', Record<string, never>, Ticket[]>,
      },
    },
  },
} as const;

const { FwProvider, useExternalCommand, useExternalQuery } = createFwReact(api);

function Tickets() {
  const { data, isLoading } = useExternalQuery('tickets.listTickets', {});
  const { mutate, error } = useExternalCommand('tickets.createTicket');
  if (isLoading) return <p>loading tickets</p>;
  return (
    <>
      <ul aria-label="tickets">{data?.map((ticket) => <li key={ticket.id}>{ticket.subject}</li>)}</ul>
      <button onClick={() => mutate({ subject: 'Printer on fire' })}>open</button>
      <button onClick={() => mutate({ subject: '' })}>open empty</button>
      {error && <p role="alert">{`${error.code}: ${error.diagnostics.map((d) => d.path).join(',')}`}</p>}
    </>
  );
}

describe('useExternalQuery and useExternalCommand against a running runtime and service', () => {
  let service: Awaited<ReturnType<typeof startTicketsRuntime>>;
  beforeAll(async () => {
    service = await startTicketsRuntime(PAGE_ORIGIN);
  });
  afterAll(() => service?.close());

  afterEach(cleanup);

  it('lists, runs a command, and the service’s queries refresh; a refused arg shows its field', async () => {
    const devAuth = { userId: 'ann', tenantId: randomUUID(), role: 'member' };
    render(
      <FwProvider apiUrl={service.url} devAuth={devAuth}>
        <Tickets />
      </FwProvider>,
    );
    const list = await screen.findByRole('list', { name: 'tickets' });
    expect(list.children).toHaveLength(0);
    fireEvent.click(screen.getByText('open'));
    expect((await screen.findByText('Printer on fire')).tagName).toBe('LI');
    expect(service.tickets.get(devAuth.tenantId)!.map((t) => t.subject)).toEqual(['Printer on fire']);
    fireEvent.click(screen.getByText('open empty'));
    expect((await screen.findByRole('alert')).textContent).toBe('validation_failed: args.subject');
    expect(service.tickets.get(devAuth.tenantId)).toHaveLength(1);
  });
});

// @vitest-environment happy-dom
import { flushPromises, mount } from '@vue/test-utils';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineComponent, h } from 'vue';
import { until } from '../../e2e/support/until.ts';
import { startTicketsRuntime, type Ticket } from '../../e2e/support/tickets-service.ts';
import type { ExternalRef } from '../api-types.ts';
import { createFwVue } from './index.ts';

const PAGE_ORIGIN = 'http://localhost:3000';

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

const fw = createFwVue(api);

const Tickets = defineComponent({
  setup() {
    const list = fw.useFwExternalQuery('tickets.listTickets', {});
    const create = fw.useFwExternalCommand(api.external.tickets.commands.createTicket);
    return () =>
      h('div', [
        h('ul', { 'aria-label': 'tickets' }, (list.data.value ?? []).map((ticket) => h('li', { key: ticket.id }, ticket.subject))),
        h('button', { onClick: () => create.mutate({ subject: 'Printer on fire' }) }, 'open'),
        create.error.value ? h('p', { role: 'alert' }, create.error.value.code) : null,
      ]);
  },
});

describe('useFwExternalQuery and useFwExternalCommand against a running runtime and service', () => {
  let service: Awaited<ReturnType<typeof startTicketsRuntime>>;
  beforeAll(async () => {
    service = await startTicketsRuntime(PAGE_ORIGIN);
  });
  afterAll(() => service?.close());

  it('lists, runs a command, and the service’s queries refresh', async () => {
    const devAuth = { userId: 'ann', tenantId: randomUUID(), role: 'member' };
    const wrapper = mount(Tickets, { global: { plugins: [[fw, { apiUrl: service.url, devAuth }]] } });
    try {
      await until(async () => (await flushPromises(), service.tickets.has(devAuth.tenantId)), 'the first list');
      await wrapper.get('button').trigger('click');
      await until(async () => (await flushPromises(), wrapper.findAll('li').length === 1), 'the refreshed list', { intervalMs: 20 });
      expect(wrapper.findAll('li').map((li) => li.text())).toEqual(['Printer on fire']);
      expect(wrapper.find('[role=alert]').exists()).toBe(false);
    } finally {
      wrapper.unmount();
    }
  });
});

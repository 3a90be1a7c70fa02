import { describe, expect, it } from 'vitest';
import { createRouteTable } from './route-table.ts';

// fw's route shapes (fw-routes.ts) beside endpoints: what the table must answer exactly as fw always has.
function table() {
  const routes = createRouteTable<string>();
  routes.add('GET', '/health', 'health');
  routes.add('HEAD', '/health', 'health');
  routes.add('POST', '/live', 'live-multiplexed');
  routes.add('GET', '/live/*', 'live');
  routes.add('POST', '/external/:service(.+)/commands/:name(.+)', 'external');
  routes.add('GET', '/_fw/*', 'admin');
  routes.add('POST', '/_fw/*', 'admin');
  routes.add('POST', '/commands/*', 'command');
  routes.add('GET', '/api/tickets/:id', 'getTicket');
  routes.add('GET', '/api/tickets/new', 'newTicketForm');
  routes.add('DELETE', '/api/tickets/:id', 'deleteTicket');
  routes.add('GET', '/api/:section/:id/summary', 'itemSummary');
  routes.add('GET', '/api/tickets/:id/history', 'ticketHistory');
  routes.add('POST', '/api/notes', 'createNote');
  routes.add('GET', '/api/notes', 'listNotes');
  return routes;
}

describe('the route table', () => {
  it('prefers static segments, segment by segment, backtracking to a param when the literal branch leads nowhere', () => {
    const routes = table();
    expect(routes.lookup('GET', '/api/tickets/new')).toEqual({ route: 'newTicketForm', params: {} });
    expect(routes.lookup('GET', '/api/tickets/17')).toEqual({ route: 'getTicket', params: { id: '17' } });
    // No DELETE at the static path: the param route serves it.
    expect(routes.lookup('DELETE', '/api/tickets/new')).toEqual({ route: 'deleteTicket', params: { id: 'new' } });
    // The earlier static segment decides (fw's specificity before the table weighed them so too).
    expect(routes.lookup('GET', '/api/tickets/summary')).toEqual({ route: 'getTicket', params: { id: 'summary' } });
    // /api/tickets/:id/… has no `summary`: back to the param at `tickets`.
    expect(routes.lookup('GET', '/api/tickets/17/summary')).toEqual({ route: 'itemSummary', params: { section: 'tickets', id: '17' } });
    expect(routes.lookup('GET', '/api/tickets/17/history')).toEqual({ route: 'ticketHistory', params: { id: '17' } });
  });

  it('matches the raw path: params come back as sent, and a percent escape never reaches a static segment', () => {
    const routes = table();
    expect(routes.lookup('GET', '/api/tickets/t%201')).toEqual({ route: 'getTicket', params: { id: 't%201' } });
    expect(routes.lookup('GET', '/api/tickets/%6Eew')).toEqual({ route: 'getTicket', params: { id: '%6Eew' } });
    expect(routes.lookup('GET', '/api/tickets/%E0%A4%A')).toEqual({ route: 'getTicket', params: { id: '%E0%A4%A' } });
    expect(routes.lookup('GET', '/api/tickets/a#b')).toEqual({ route: 'getTicket', params: { id: 'a#b' } });
    expect(routes.lookup('GET', '/h%65alth')).toBeNull();
    expect(routes.lookup('GET', '/api/tickets/' + 'x'.repeat(500))).toEqual({ route: 'getTicket', params: { id: 'x'.repeat(500) } });
  });

  it('takes the rest of the path in a trailing *, empty and slashes included; exact paths stay exact', () => {
    const routes = table();
    expect(routes.lookup('POST', '/commands/')).toEqual({ route: 'command', params: { '*': '' } });
    expect(routes.lookup('POST', '/commands/a/b/')).toEqual({ route: 'command', params: { '*': 'a/b/' } });
    expect(routes.lookup('POST', '/commands/a%20b')).toEqual({ route: 'command', params: { '*': 'a%20b' } });
    expect(routes.lookup('GET', '/live/')).toEqual({ route: 'live', params: { '*': '' } });
    expect(routes.lookup('GET', '/_fw/live/status')).toEqual({ route: 'admin', params: { '*': 'live/status' } });
    for (const path of ['/commands', '/_fw', '/health/', '//health', '/Health', '/api/notes/', '/external//commands/x', '/external/s/commands/', '/external/s/commands/x/y']) {
      expect({ path, found: routes.lookup('POST', path) }).toEqual({ path, found: null });
    }
    expect(routes.lookup('POST', '/external/s%201/commands/x')).toEqual({ route: 'external', params: { service: 's%201', name: 'x' } });
  });

  it('answers a served path with another method by the methods it is served with, in registration order', () => {
    const routes = table();
    expect(routes.lookup('POST', '/health')).toEqual({ allowed: ['GET', 'HEAD'], route: 'health', params: {} });
    expect(routes.lookup('OPTIONS', '/api/tickets/17')).toEqual({ allowed: ['GET', 'DELETE'], route: 'getTicket', params: { id: '17' } });
    expect(routes.lookup('PUT', '/api/notes')).toEqual({ allowed: ['POST', 'GET'], route: 'createNote', params: {} });
    expect(routes.lookup('HEAD', '/api/notes')).toMatchObject({ allowed: ['POST', 'GET'] });
    expect(routes.lookup('PUT', '/nothing/here')).toBeNull();
  });

  it('keeps the first route registered for a method and a path shape', () => {
    const routes = createRouteTable<string>();
    routes.add('GET', '/api/t/:id', 'first');
    routes.add('GET', '/api/t/:key', 'second');
    expect(routes.lookup('GET', '/api/t/1')).toEqual({ route: 'first', params: { id: '1' } });
  });
});

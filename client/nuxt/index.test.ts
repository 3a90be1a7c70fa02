import { describe, expect, it } from 'vitest';
import { defaultFwUrl, fwNuxtOptions, fwUrlFrom } from './index.ts';

describe('fwUrlFrom', () => {
  it('takes an absolute fwUrl as it is, and falls back to the default without one', () => {
    expect(fwUrlFrom({ public: { fwUrl: 'https://api.example.com' } })).toBe('https://api.example.com');
    expect(fwUrlFrom({ public: { fwUrl: 'https://api.example.com' } }, 'http://127.0.0.1:3000')).toBe('https://api.example.com');
    expect(fwUrlFrom({ public: {} })).toBe(defaultFwUrl);
    expect(fwUrlFrom({ public: { fwUrl: '' } })).toBe(defaultFwUrl);
  });

  it("keeps a path for the browser and resolves it against the request's origin on the server", () => {
    // fw's Nuxt module sets '/' in dev: the runtime answers on Nuxt's own origin.
    expect(fwUrlFrom({ public: { fwUrl: '/' } })).toBe('/');
    expect(fwUrlFrom({ public: { fwUrl: '/' } }, 'http://127.0.0.1:3000')).toBe('http://127.0.0.1:3000');
    expect(fwUrlFrom({ public: { fwUrl: '/fw/' } }, 'http://127.0.0.1:3000')).toBe('http://127.0.0.1:3000/fw');
    expect(fwNuxtOptions({ public: { fwUrl: '/' } }, { server: true }, 'http://localhost:4000')).toEqual({ server: true, apiUrl: 'http://localhost:4000' });
  });
});

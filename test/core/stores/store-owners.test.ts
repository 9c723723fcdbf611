import { describe, expect, it } from 'vitest';
import { createPay, MemoryAdminTokenStore, MemoryClaimStore, MemoryLedgerStore, type PayOptions } from 'paywidget-server';
import { thrown } from '../../helpers/pay-errors.js';

const merchant = (merchantId: string, extra: Partial<PayOptions> = {}): PayOptions => ({
  env: {},
  payment: { apiUrl: 'http://127.0.0.1:9', merchantId, apiKey: 'k', webhookSecret: 'w' },
  ...extra,
});
const shop = (url: string) => ({ url, username: 'admin', password: 'secret' });

describe('stores shared between Pay instances', () => {
  it('refuses a store another instance uses for another merchant: one shop\'s order would be refused as paid by the other\'s payment', () => {
    const ledger = new MemoryLedgerStore();
    createPay(merchant('m1', { stores: { ledger } }));
    const error = thrown(() => createPay(merchant('m2', { stores: { ledger } })), 'a second merchant on the same ledger');
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.details).toEqual({ options: ['stores.ledger'] });
    expect(error.message).toContain("redisStores(redis, { prefix: 'paywidget:<shop>:' })");
    expect(error.message).toContain('stores.ledger is already used in this process by a Pay instance for merchant m1; this one is for m2.');
  });

  it('ties no stores to an instance that failed to build (a mistyped merchant id with a bad option)', () => {
    const ledger = new MemoryLedgerStore();
    expect(thrown(() => createPay(merchant('m-typo', { stores: { ledger }, webhooks: { leaseMs: -1 } })), 'a bad lease').code).toBe('CONFIG_INVALID');
    expect(() => createPay(merchant('m-real', { stores: { ledger } }))).not.toThrow();
  });

  it('still refuses a second merchant when the first instance on the stores named none (built without secrets at `next build`)', () => {
    const ledger = new MemoryLedgerStore();
    createPay({ env: {}, payment: { webhookSecret: 'w' }, stores: { ledger } });
    createPay(merchant('m1', { stores: { ledger } }));
    expect(thrown(() => createPay(merchant('m2', { stores: { ledger } })), 'a second merchant after an unnamed first').code).toBe('CONFIG_INVALID');
  });

  it('refuses it for another commerce store of the same merchant too: order numbers repeat from store to store', () => {
    const claims = new MemoryClaimStore();
    createPay(merchant('m1', { stores: { claims }, commerce: shop('https://one.example.com') }));
    expect(thrown(() => createPay(merchant('m1', { stores: { claims }, commerce: shop('https://two.example.com') })), 'a second shop').details).toEqual({ options: ['stores.claims'] });
  });

  it('lets merchants and shops share one admin-token store: its keys name the platform and user, and Magento counts refused logins per user', () => {
    const adminTokens = new MemoryAdminTokenStore();
    createPay(merchant('m1', { stores: { adminTokens }, commerce: shop('https://one.example.com') }));
    expect(() => createPay(merchant('m2', { stores: { adminTokens }, commerce: shop('https://one.example.com') }))).not.toThrow();
    expect(() => createPay(merchant('m3', { stores: { adminTokens }, commerce: shop('https://two.example.com') }))).not.toThrow();
  });

  it('lets instances of one merchant share them, and one that names no merchant (webhooks only) share them with any', () => {
    const ledger = new MemoryLedgerStore();
    createPay(merchant('m1', { stores: { ledger }, commerce: shop('https://one.example.com') }));
    expect(() => createPay(merchant('m1', { stores: { ledger } }))).not.toThrow();
    expect(() => createPay({ env: {}, payment: { webhookSecret: 'w' }, stores: { ledger } })).not.toThrow();
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { authModule } from '../../src/auth/module.js';
import { defaultHashConcurrency, PasswordHasher } from '../../src/auth/passwords.js';
import { availableParallelism } from 'node:os';
import { loadAll, settingsOf } from '../support/settings.js';

const refused = (env: Record<string, string>, variable: string, message: RegExp) =>
  assert.throws(
    () => loadAll(env),
    (err: unknown) => err instanceof ConfigError && err.variable === variable && message.test(err.message),
  );

describe('TRUST_PROXY', () => {
  it('is off by default and with false or 0', () => {
    for (const value of [undefined, '', 'false', '0']) assert.equal(loadConfig(value === undefined ? {} : { TRUST_PROXY: value }).trustProxy, false);
  });

  it('refuses true, saying why and what to use instead', () => {
    refused({ TRUST_PROXY: 'true' }, 'TRUST_PROXY', /any client could pick its own address.*number of proxies.*\(e\.g\. 1\).*CIDRs/);
  });

  it('takes a hop count', () => {
    assert.equal(loadConfig({ TRUST_PROXY: '1' }).trustProxy, 1);
    assert.equal(loadConfig({ TRUST_PROXY: ' 2 ' }).trustProxy, 2);
    refused({ TRUST_PROXY: '11' }, 'TRUST_PROXY', /hop count/);
  });

  it('takes proxy addresses and CIDRs, IPv4 and IPv6', () => {
    assert.deepEqual(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 192.168.1.7,2001:db8::/32,loopback' }).trustProxy, [
      '10.0.0.0/8',
      '192.168.1.7',
      '2001:db8::/32',
      'loopback',
    ]);
  });

  it('refuses anything else, naming the entry', () => {
    for (const value of ['yes', '10.0.0.0/33', '10.0.0/8', 'proxy.example.com', '10.0.0.1/8/8', '2001:db8::/129', '-1']) {
      refused({ TRUST_PROXY: value }, 'TRUST_PROXY', /hop count|proxy addresses/);
    }
  });
});

describe('SIGNUP_LIMIT_ADDRESS', () => {
  it('defaults to 20 an hour; 0 turns it off; garbage is refused', () => {
    assert.deepEqual(settingsOf(authModule, {}).signupLimitAddress, { count: 20, seconds: 3600 });
    assert.deepEqual(settingsOf(authModule, { SIGNUP_LIMIT_ADDRESS: '5/60' }).signupLimitAddress, { count: 5, seconds: 60 });
    assert.equal(settingsOf(authModule, { SIGNUP_LIMIT_ADDRESS: '0' }).signupLimitAddress, null);
    refused({ SIGNUP_LIMIT_ADDRESS: 'lots' }, 'SIGNUP_LIMIT_ADDRESS', /<count>\/<seconds>/);
  });
});

describe('APP_URL and ALLOWED_ORIGINS', () => {
  it('defaults to the listen address, a wildcard one as localhost', () => {
    assert.equal(loadConfig({}).appUrl, 'http://127.0.0.1:3000');
    assert.equal(loadConfig({ HOST: '0.0.0.0', PORT: '8080' }).appUrl, 'http://localhost:8080');
    assert.equal(loadConfig({ HOST: '::1', PORT: '8080' }).appUrl, 'http://[::1]:8080');
  });

  it('keeps the origin of an http(s) URL', () => {
    assert.equal(loadConfig({ APP_URL: 'https://App.Example.com/' }).appUrl, 'https://app.example.com');
    assert.equal(loadConfig({ APP_URL: 'https://app.example.com:443' }).appUrl, 'https://app.example.com');
    assert.deepEqual(loadConfig({ ALLOWED_ORIGINS: 'https://admin.example.com, http://localhost:5173' }).allowedOrigins, [
      'https://admin.example.com',
      'http://localhost:5173',
    ]);
    assert.deepEqual(loadConfig({}).allowedOrigins, []);
  });

  it('refuses what is not an origin', () => {
    refused({ APP_URL: 'app.example.com' }, 'APP_URL', /http\(s\) URL/);
    refused({ APP_URL: 'ftp://app.example.com' }, 'APP_URL', /http\(s\) URL/);
    refused({ APP_URL: 'https://user:pw@app.example.com' }, 'APP_URL', /without credentials/);
    refused({ APP_URL: 'https://app.example.com/app' }, 'APP_URL', /origin only/);
    refused({ ALLOWED_ORIGINS: 'https://ok.example, *' }, 'ALLOWED_ORIGINS', /http\(s\) URL/);
  });
});

describe('PASSWORD_HASH_CONCURRENCY', () => {
  it('is automatic by default: one hash at a time on the embedded database, one per core on PostgreSQL', () => {
    assert.equal(settingsOf(authModule, {}).passwordHashConcurrency, 0);
    assert.equal(defaultHashConcurrency(undefined), 1, 'PGlite in a directory');
    assert.equal(defaultHashConcurrency('memory://'), 1, 'PGlite in memory');
    assert.equal(defaultHashConcurrency('postgres://app@db:5432/app'), availableParallelism());
    assert.equal(defaultHashConcurrency('postgresql://app@db/app'), availableParallelism());
  });

  it('takes a count and refuses garbage', () => {
    assert.equal(settingsOf(authModule, { PASSWORD_HASH_CONCURRENCY: '3' }).passwordHashConcurrency, 3);
    refused({ PASSWORD_HASH_CONCURRENCY: 'many' }, 'PASSWORD_HASH_CONCURRENCY', /whole number/);
    refused({ PASSWORD_HASH_CONCURRENCY: '65' }, 'PASSWORD_HASH_CONCURRENCY', /between 0 and 64/);
  });
});

describe('PasswordHasher', () => {
  it('never runs more hashes at once than its limit, a newcomer arriving as a slot passes on included', async () => {
    const hasher = new PasswordHasher(1);
    // the hashing replaced by tasks the test ends: the semaphore is what is tested
    const slots = (hasher as unknown as { slots: { run<T>(task: () => Promise<T>): Promise<T> } }).slots;
    let running = 0;
    let most = 0;
    const ends: Array<() => void> = [];
    const task = () => {
      running++;
      most = Math.max(most, running);
      return new Promise<void>((resolve) =>
        ends.push(() => {
          running--;
          resolve();
        }),
      );
    };
    const all = [slots.run(task), slots.run(task)];
    await new Promise((resolve) => setImmediate(resolve));
    // the first ends, and a newcomer is queued before the waiter wakes (the release runs first)
    ends.shift()!();
    queueMicrotask(() => all.push(slots.run(task)));
    for (let i = 0; i < 3; i++) {
      await new Promise((resolve) => setImmediate(resolve));
      ends.shift()?.();
    }
    await Promise.all(all);
    assert.equal(most, 1);
  });
});

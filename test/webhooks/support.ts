/**
 * Test support for webhooks: a receiver on 127.0.0.1 that verifies every delivery with the
 * `standardwebhooks` package and answers as the test says, receivers that misbehave on raw TCP
 * (silent, dripping), a DNS server (dns2) that answers as the test says, and polling helpers.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import dns2 from 'dns2';
import { Webhook } from 'standardwebhooks';
import { as, type TestAccount } from '../orgs/support.js';
import type { TestSystem } from '../support/system.js';

export interface ReceivedDelivery {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** the secrets (of those the test gave) whose signature verifies */
  verifiedWith: string[];
  /** the parsed body */
  event: { type: string; timestamp: string; data: Record<string, any> };
}

/** What the receiver does with a request: answer (status, body, headers), or hang until the test ends. */
export type Answer = { status: number; body?: string; headers?: Record<string, string> } | 'hang' | ((req: IncomingMessage, res: ServerResponse) => void);

export interface Receiver {
  url: string;
  port: number;
  received: ReceivedDelivery[];
  /** secrets to verify with; a delivery verified by none fails the test at `verified()` */
  secrets: string[];
  /** answers, in turn; the last one repeats */
  answers: Answer[];
  /** answers for one path (`/retry`), in turn, the last one repeating; other paths get `answers` */
  byPath: Record<string, Answer[]>;
  /** the deliveries so far to `path` (all without it), each asserted verified by at least one secret */
  verified(path?: string): ReceivedDelivery[];
  close(): Promise<void>;
}

export async function receiver(): Promise<Receiver> {
  const hung: ServerResponse[] = [];
  const self: Receiver = {
    url: '',
    port: 0,
    received: [],
    secrets: [],
    answers: [{ status: 204 }],
    byPath: {},
    verified(path) {
      const chosen = self.received.filter((d) => path === undefined || d.path === path);
      for (const d of chosen) assert.ok(d.verifiedWith.length > 0, `delivery ${d.headers['webhook-id']} to ${d.path} verifies with a known secret`);
      return chosen;
    },
    async close() {
      for (const res of hung) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const verifiedWith = self.secrets.filter((secret) => {
        try {
          new Webhook(secret).verify(body, req.headers as Record<string, string>);
          return true;
        } catch {
          return false;
        }
      });
      let event: ReceivedDelivery['event'];
      try {
        event = JSON.parse(body) as ReceivedDelivery['event'];
      } catch {
        event = { type: 'unparsable', timestamp: '', data: {} };
      }
      self.received.push({ path: req.url ?? '', headers: req.headers, body, verifiedWith, event });
      const queue = self.byPath[req.url ?? ''] ?? self.answers;
      const answer = queue.length > 1 ? queue.shift()! : queue[0];
      if (answer === 'hang') {
        hung.push(res);
        return;
      }
      if (typeof answer === 'function') return answer(req, res);
      res.writeHead(answer.status, answer.headers ?? {});
      res.end(answer.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  self.port = (server.address() as AddressInfo).port;
  self.url = `http://127.0.0.1:${self.port}`;
  return self;
}

export interface TestDns {
  /** `127.0.0.1:<port>`, for WEBHOOK_DNS_SERVERS */
  server: string;
  /** questions asked, `name/type` */
  asked: string[];
  close(): Promise<void>;
}

/** A DNS server on 127.0.0.1 (UDP) answering A questions with `answer(name, nth)` (nth: how many A questions for that name came before). */
export async function dnsServer(answer: (name: string, nth: number) => string[]): Promise<TestDns> {
  const { Packet } = dns2;
  const counts = new Map<string, number>();
  const asked: string[] = [];
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const [question] = request.questions;
      const name = question.name.toLowerCase();
      asked.push(`${name}/${question.type === Packet.TYPE.A ? 'A' : question.type === Packet.TYPE.AAAA ? 'AAAA' : question.type}`);
      if (question.type === Packet.TYPE.A) {
        const nth = counts.get(name) ?? 0;
        counts.set(name, nth + 1);
        for (const address of answer(name, nth)) {
          response.answers.push({
            name: question.name,
            type: Packet.TYPE.A,
            class: Packet.CLASS.IN,
            ttl: 0,
            address,
          } as unknown as (typeof response.answers)[number]);
        }
      }
      send(response);
    },
  });
  const addresses = await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  return { server: `127.0.0.1:${addresses.udp!.port}`, asked, close: () => server.close() };
}

/** Polls `check` until it returns something truthy; fails naming `what` after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => T | Promise<T>, timeoutMs = 20_000): Promise<NonNullable<T>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

export interface CreatedEndpoint {
  id: string;
  secret: string;
}

/** Creates an endpoint as `who`; asserts 201. */
export async function createEndpoint(t: TestSystem, who: TestAccount, orgId: string, body: Record<string, unknown>): Promise<CreatedEndpoint> {
  const res = await as(t, who, 'POST', `/api/orgs/${orgId}/webhooks`, body);
  assert.equal(res.status, 201, res.text);
  return { id: res.body.id, secret: res.body.secret };
}

/** The endpoint's deliveries (the first page, newest first). */
export async function deliveries(t: TestSystem, who: TestAccount, orgId: string, webhookId: string, query = ''): Promise<any[]> {
  const res = await as(t, who, 'GET', `/api/orgs/${orgId}/webhooks/${webhookId}/deliveries${query}`);
  assert.equal(res.status, 200, res.text);
  return res.body.deliveries;
}

/** A receiver that misbehaves on a raw TCP socket: `silent` accepts and never answers; `drip` answers 200 and sends its body a byte every 100 ms. */
export interface MisbehavingReceiver {
  url: string;
  /** connections open now */
  open(): number;
  /** the most requests in flight at once (head received, client not gone), in all and per request path */
  maxOpen: number;
  maxOpenPerPath: number;
  /** connections accepted so far */
  accepted: number;
  /** from now on every request is answered 204 at once */
  heal(): void;
  close(): Promise<void>;
}

export async function misbehavingReceiver(mode: 'silent' | 'drip'): Promise<MisbehavingReceiver> {
  const sockets = new Set<Socket>();
  /** requests whose head arrived and whose client has not ended its side: attempts in flight, as the receiver sees them */
  const inFlight = new Map<Socket, string>();
  let healed = false;
  const counted = (path?: string) => [...inFlight.values()].filter((p) => path === undefined || p === path).length;
  const server = createNetServer((socket) => {
    sockets.add(socket);
    self.accepted++;
    let head = '';
    let drip: NodeJS.Timeout | undefined;
    const ended = () => {
      clearInterval(drip);
      inFlight.delete(socket);
    };
    socket.on('data', (chunk: Buffer) => {
      if (head.includes('\r\n\r\n')) return;
      head += chunk.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      const path = /^POST (\S+) HTTP/.exec(head)?.[1] ?? '?';
      inFlight.set(socket, path);
      self.maxOpen = Math.max(self.maxOpen, counted());
      self.maxOpenPerPath = Math.max(self.maxOpenPerPath, counted(path));
      if (healed) return void socket.end('HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n');
      if (mode === 'silent') return;
      socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100000\r\n\r\n');
      drip = setInterval(() => socket.write('x'), 100);
    });
    socket.on('error', () => undefined);
    socket.on('end', ended);
    socket.on('close', () => {
      ended();
      sockets.delete(socket);
    });
  });
  const self: MisbehavingReceiver = {
    url: '',
    open: () => sockets.size,
    maxOpen: 0,
    maxOpenPerPath: 0,
    accepted: 0,
    heal() {
      healed = true;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  self.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return self;
}

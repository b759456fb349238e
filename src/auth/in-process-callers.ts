/**
 * A caller handed to a request the server makes to itself (the MCP server's tool calls run their
 * route with `app.inject`, src/mcp/): the JWT middleware takes `Bearer ipc_<random>` as the account
 * it names, with the OAuth scopes the outer request's token gave, so every gate of the route sees
 * the same caller it would over HTTP. The credential is 256 random bits, lives only in this
 * process's memory for the one request it was made for (its method and URL), and is gone once that
 * request is answered: an outside request cannot know, guess or replay it.
 */
import { randomBytes } from 'node:crypto';
import type { AuthUser } from '../http/routes.js';

export const IN_PROCESS_MARK = 'ipc_';

interface Handed {
  user: AuthUser;
  method: string;
  url: string;
}

export class InProcessCallers {
  private readonly live = new Map<string, Handed>();

  /** Runs `call` with a credential naming `user` for the request `method url`, valid until `call` settles. */
  async as<T>(user: AuthUser, method: string, url: string, call: (credential: string) => Promise<T>): Promise<T> {
    const credential = IN_PROCESS_MARK + randomBytes(32).toString('base64url');
    this.live.set(credential, { user, method, url });
    try {
      return await call(credential);
    } finally {
      this.live.delete(credential);
    }
  }

  /** The caller a presented credential names, on the request it was made for; undefined otherwise. */
  find(credential: string, method: string, url: string): AuthUser | undefined {
    const handed = this.live.get(credential);
    return handed && handed.method === method && handed.url === url ? handed.user : undefined;
  }
}

/**
 * Browser tests' shared harness: Debian's Chromium through playwright-core (never a downloaded
 * browser), pages in contexts of their own, and steps that fail on any console error, page
 * error or failing request (status >= 400, or no answer; not one the page cancelled by leaving)
 * unless the step names it as provoked on purpose. A failed step leaves a screenshot of every page in `test-artifacts/`.
 *
 *   const browser = browserHarness('orgs');
 *   describe('…', { skip: browser.skip }, () => {
 *     before(async () => { await browser.launch(); a = await browser.openPage('a'); });
 *     after(() => browser.close());
 *     browser.step('A signs up', async () => { … }, [/^a response: POST \/api\/x 409$/]);
 *   });
 *
 * Problem lines read `<who> response: METHOD /path STATUS`, `<who> request failed: …`,
 * `<who> console: text (url)` and `<who> page error: message`.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page, type Request, type Response } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
/** where `npm run build:client` puts the client; tests serve it with PUBLIC_DIR */
export const PUBLIC_DIR = fileURLToPath(new URL('../../public', import.meta.url));
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts', import.meta.url));
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** the notification stream a signed-in page keeps open while the app is (docs/client.md): never "in flight" for a quiet network */
export const NOTIFICATION_STREAM_PATH = '/api/notifications/stream';
const isLiveStream = (r: Request) => r.method() === 'GET' && new URL(r.url()).pathname === NOTIFICATION_STREAM_PATH;

if (process.env.CI === 'true' && !existsSync(CHROMIUM)) throw new Error(`CI=true requires Chromium at ${CHROMIUM}`);

export interface PageOptions {
  /** sees every response too */
  onResponse?: (response: Response) => void;
  /** sees every request */
  onRequest?: (request: Request) => void;
  /** the app's own URLs: problems elsewhere (another site the flow visits, a provider) are not the app's */
  own?: (url: string) => boolean;
  /** the browser context's options (viewport, color scheme) */
  context?: BrowserContextOptions;
  /** console warnings are problems too */
  warnings?: boolean;
}

export interface BrowserHarness {
  /** the `skip` option of the suite: a reason when Chromium is missing (never under CI=true) */
  skip: string | false;
  /** the problems since the current step began */
  readonly problems: string[];
  launch(): Promise<Browser>;
  /** a page in a browser context of its own, watched */
  openPage(who: string, options?: PageOptions): Promise<Page>;
  /** the context of a page opened here */
  contextOf(who: string): BrowserContext;
  /**
   * Resolves once no request of the page (opened here) has been in flight for `quietMs`: what
   * Playwright's `networkidle` checks, with a shorter quiet spell than its 500 ms (that wait was
   * most of a page check's time); fails after 30 s, as `networkidle` does. The notification stream,
   * open as long as a signed-in page is, does not count (`networkidle` would never come for it).
   */
  networkQuiet(page: Page, quietMs?: number): Promise<void>;
  /** a test step: fails on a problem no `provokes` pattern matches */
  step(name: string, fn: () => Promise<void>, provokes?: RegExp[]): void;
  close(): Promise<void>;
}

export function browserHarness(name: string): BrowserHarness {
  let browser: Browser | undefined;
  const pages = new Map<string, { page: Page; context: BrowserContext }>();
  const problems: string[] = [];
  /** each page's requests in flight, and when that number last changed */
  const traffic = new Map<Page, { inFlight: number; since: number }>();

  return {
    skip: existsSync(CHROMIUM) ? false : 'Chromium is not installed',
    problems,
    async launch() {
      assert.ok(existsSync(`${PUBLIC_DIR}/index.html`), 'the client is built (npm run build:client)');
      browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
      return browser;
    },
    async openPage(who, options = {}) {
      assert.ok(browser, 'launch() first');
      const own = options.own ?? (() => true);
      const context = await browser.newContext(options.context);
      const page = await context.newPage();
      const flow = { inFlight: 0, since: Date.now() };
      traffic.set(page, flow);
      page.on('request', (r) => {
        if (isLiveStream(r)) return;
        flow.inFlight++;
        flow.since = Date.now();
      });
      // a redirect finishes its request and starts another
      const ended = (r: Request) => {
        if (isLiveStream(r)) return;
        flow.inFlight--;
        flow.since = Date.now();
      };
      page.on('requestfinished', ended);
      page.on('requestfailed', ended);
      if (options.onRequest) page.on('request', options.onRequest);
      page.on('response', (r) => {
        options.onResponse?.(r);
        if (r.status() >= 400 && own(r.url())) problems.push(`${who} response: ${r.request().method()} ${new URL(r.url()).pathname} ${r.status()}`);
      });
      page.on('requestfailed', (r) => {
        // the page cancelled it: left for another (a step's goto while the page still loads, a reload, a redirect
        // to Stripe), which drops its requests in flight; the app's failures are other errors (reset, empty response)
        if (r.failure()?.errorText === 'net::ERR_ABORTED') return;
        if (own(r.url())) problems.push(`${who} request failed: ${r.method()} ${r.url()} ${r.failure()?.errorText ?? ''}`);
      });
      page.on('console', (m) => {
        const kind = m.type() === 'error' || (options.warnings && m.type() === 'warning') ? m.type() : undefined;
        if (kind && own(page.url())) problems.push(`${who} console${kind === 'warning' ? ' warning' : ''}: ${m.text()} (${m.location().url})`);
      });
      page.on('pageerror', (err) => problems.push(`${who} page error: ${err.message}`));
      pages.set(who, { page, context });
      return page;
    },
    contextOf(who) {
      const entry = pages.get(who);
      assert.ok(entry, `no page "${who}"`);
      return entry.context;
    },
    async networkQuiet(page, quietMs = 150) {
      const flow = traffic.get(page);
      assert.ok(flow, 'a page opened with openPage()');
      for (let waited = 0; waited < 30_000; waited += 25) {
        if (flow.inFlight <= 0 && Date.now() - flow.since >= quietMs) return;
        await sleep(25);
      }
      throw new Error(`the network did not go quiet in 30 s (${flow.inFlight} requests in flight)`);
    },
    step(stepName, fn, provokes = []) {
      it(stepName, async () => {
        problems.length = 0;
        try {
          await fn();
          await sleep(100); // late console messages of the step's last request
          const unexpected = problems.filter((p) => !provokes.some((re) => re.test(p)));
          assert.deepEqual(unexpected, [], 'no console error and no failing request');
        } catch (err) {
          await mkdir(ARTIFACTS, { recursive: true });
          for (const [who, { page }] of pages) {
            await page.screenshot({ path: `${ARTIFACTS}/${name}-${stepName.replace(/\W+/g, '-')}-${who}.png`, fullPage: true }).catch(() => undefined);
          }
          throw err;
        }
      });
    },
    async close() {
      for (const { context } of pages.values()) await context.close().catch(() => undefined);
      pages.clear();
      traffic.clear();
      await browser?.close();
      browser = undefined;
    },
  };
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
/** the rules the client is held to: WCAG 2.0, 2.1 and 2.2, A and AA */
export const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];

/** axe-core's violations of {@link AXE_TAGS} on the page as it is now, one line each (empty: none). */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  return page.evaluate(async (tags) => {
    const axe = (
      window as unknown as {
        axe: {
          run(ctx: Document, o: unknown): Promise<{ violations: Array<{ id: string; impact: string; help: string; nodes: Array<{ target: unknown[] }> }> }>;
        };
      }
    ).axe;
    const result = await axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
    return result.violations.map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help} at ${v.nodes
          .slice(0, 3)
          .map((n) => JSON.stringify(n.target))
          .join(', ')}`,
    );
  }, AXE_TAGS);
}

/**
 * Logs in through the log-in page as a user does, and waits for the dashboard with its
 * organizations loaded (the switcher shows them): nothing is in flight for a next navigation to cut off.
 */
export async function logInThroughPage(page: Page, appUrl: string, who: { email: string }, password: string): Promise<void> {
  await page.goto(`${appUrl}/log-in`);
  await page.getByLabel('Email', { exact: true }).fill(who.email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.waitForURL(`${appUrl}/account`);
  await page.locator('#org-switcher').waitFor();
}

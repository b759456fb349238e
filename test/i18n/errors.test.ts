/**
 * Error answers in the reader's language (docs/i18n.md), one system per database: a 400 of a
 * Spanish request is in Spanish with its `type`, `in` and paths as in English; the locale comes
 * from the account (its access token), then the `locale` cookie, then `Accept-Language` (RFC 4647
 * lookup: `de-AT` is German), and a header that matches nothing, or garbage, is the default,
 * never an error. The account's `locale`: set at sign-up from what the browser names, changed by
 * `PATCH /api/account/me` (a regional tag kept as its language, null clearing it, an unknown one
 * 400 naming the supported ones).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { logIn, PASSWORD, uniqueEmail } from '../support/auth.js';
import { startSystem, testDatabases, type TestSystem } from '../support/system.js';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

for (const database of testDatabases()) {
  describe(`error answers in the reader's language (${database.name})`, () => {
    let t: TestSystem;
    before(async () => {
      t = await startSystem(database);
    });
    after(async () => {
      await t?.stop();
    });

    const badSignUp = (headers: Record<string, string>) =>
      t.client('POST', '/api/account/sign-up', { headers, body: { email: uniqueEmail(), password: 'short', extra: 1 } });

    it('answers a Spanish 400 in Spanish, its type, place and paths as in English', async () => {
      const english = await badSignUp({});
      const spanish = await badSignUp({ 'accept-language': 'es-MX,es;q=0.9,en;q=0.5' });
      assert.equal(english.status, 400);
      assert.equal(spanish.status, 400);
      assert.equal(english.body.message, 'Invalid request body');
      assert.equal(spanish.body.message, 'Cuerpo de la solicitud no válido');
      assert.equal(spanish.body.type, english.body.type);
      assert.equal(spanish.body.in, english.body.in);
      const paths = (body: { errors: Array<{ path: string }> }) => body.errors.map((e) => e.path).sort();
      assert.deepEqual(paths(spanish.body), paths(english.body));
      const reason = (body: { errors: Array<{ path: string; message: string }> }, path: string) => body.errors.find((e) => e.path === path)?.message;
      assert.equal(reason(english.body, '/extra'), 'is not allowed');
      assert.equal(reason(spanish.body, '/extra'), 'no está permitido');
      // Ajv's own reason, through ajv-i18n: the limit in it as in English
      assert.match(reason(english.body, '/password') ?? '', /8/);
      assert.match(reason(spanish.body, '/password') ?? '', /8/);
      assert.notEqual(reason(spanish.body, '/password'), reason(english.body, '/password'));
    });

    it('takes the best supported language of Accept-Language; one that matches nothing, or garbage, is the default', async () => {
      assert.equal((await badSignUp({ 'accept-language': 'de-AT' })).body.message, 'Ungültiger Anfragetext');
      assert.equal((await badSignUp({ 'accept-language': 'fr-CA, fr;q=0.9, ar;q=0.2' })).body.message, 'نص الطلب غير صالح');
      for (const header of ['fr, ja;q=0.5', '*', ';;;q=zz,,', 'x'.repeat(2000), 'de;q=0']) {
        const res = await badSignUp({ 'accept-language': header });
        assert.equal(res.status, 400, header);
        assert.equal(res.body.message, 'Invalid request body', header);
      }
    });

    it("a message with values, an error of the code's own and the locale cookie over Accept-Language", async () => {
      const res = await t.client('DELETE', '/api/account/log-in', { headers: { 'accept-language': 'en', cookie: 'locale=de' } });
      assert.equal(res.status, 405);
      assert.equal(res.body.type, 'method-not-allowed');
      assert.equal(res.body.message, 'DELETE ist hier nicht erlaubt; verwenden Sie POST');
      const unknownCookie = await t.client('DELETE', '/api/account/log-in', { headers: { 'accept-language': 'es', cookie: 'locale=klingon' } });
      assert.equal(unknownCookie.body.message, 'DELETE no está permitido aquí; usa POST', 'an unknown cookie value names nothing');
    });

    it("a 415 in the reader's language, its type and supported types as in English", async () => {
      const post = (headers: Record<string, string>) =>
        t.client('POST', '/api/account/forgot-password', { headers: { 'content-type': 'text/csv', ...headers }, body: 'a,b' });
      const english = await post({});
      const german = await post({ 'accept-language': 'de' });
      const spanish = await post({ 'accept-language': 'es' });
      assert.equal(english.status, 415);
      assert.match(english.body.message, /^The request's Content-Type is not supported; use one of application\/json, /);
      for (const res of [german, spanish]) {
        assert.equal(res.status, 415);
        assert.equal(res.body.type, english.body.type);
        assert.deepEqual(res.body.supported, english.body.supported);
      }
      const supported = english.body.supported.join(', ');
      assert.equal(german.body.message, `Der Content-Type der Anfrage wird nicht unterstützt; verwenden Sie einen von ${supported}`);
      assert.equal(spanish.body.message, `El Content-Type de la solicitud no es compatible; usa uno de ${supported}`);
    });

    it("a malformed body in the reader's language: the format, the place and the reasons the codecs write", async () => {
      const post = (body: string, contentType: string, language?: string) =>
        t.client('POST', '/api/account/forgot-password', {
          headers: { 'content-type': contentType, ...(language ? { 'accept-language': language } : {}) },
          body,
        });
      const english = await post('{', 'application/json');
      const spanish = await post('{', 'application/json', 'es');
      assert.equal(english.status, 400);
      assert.equal(english.body.message, "Malformed JSON at line 1, column 2: expected property name or '}'", 'English as before');
      assert.equal(spanish.status, 400);
      assert.equal(spanish.body.type, english.body.type);
      assert.equal(spanish.body.type, 'malformed-body');
      assert.equal(spanish.body.in, english.body.in);
      // V8's reason stays as V8 wrote it: data, not a message
      assert.equal(spanish.body.message, "JSON mal formado en la línea 1, columna 2: expected property name or '}'");
      assert.equal((await post('{"email":', 'application/json')).body.message, 'Malformed JSON: unexpected end of input');
      assert.equal((await post('{"email":', 'application/json', 'de')).body.message, 'Fehlerhaftes JSON: unerwartetes Ende der Eingabe');
      assert.equal((await post('{:email ', 'application/edn')).body.message, 'Malformed EDN at line 1, column 9: unclosed map');
      assert.equal((await post('{:email ', 'application/edn', 'de')).body.message, 'Fehlerhaftes EDN in Zeile 1, Spalte 9: nicht geschlossene Map');
      assert.equal((await post('{:email ', 'application/edn', 'ar')).body.message, 'EDN غير سليم في السطر 1، العمود 9: خريطة (map) غير مغلقة');
      assert.equal((await post('["^ ","~:email"]', 'application/transit+json')).body.message, 'Malformed Transit: map with an odd number of entries');
      assert.equal(
        (await post('["^ ","~:email"]', 'application/transit+json', 'es')).body.message,
        'Transit mal formado: mapa con un número impar de entradas',
      );
      assert.equal((await post('{"__proto__":{}}', 'application/json', 'de')).body.message, 'Verbotener Schlüssel „__proto__“');
      assert.equal((await post('__proto__=1', 'application/x-www-form-urlencoded', 'es')).body.message, 'Clave prohibida «__proto__»');
    });

    it("ajv-i18n's reasons come without the spaces around some of them (Arabic's)", async () => {
      const arabic = await badSignUp({ 'accept-language': 'ar' });
      const reason = arabic.body.errors.find((e: { path: string }) => e.path === '/password')?.message as string;
      assert.match(reason, /8/);
      assert.equal(reason, reason.trim());
      assert.ok(arabic.body.errors.every((e: { message: string }) => e.message === e.message.trim()));
    });

    it("a query's parameters refused in the reader's language, their paths as in English", async () => {
      const email = uniqueEmail('query-i18n');
      assert.equal((await t.client('POST', '/api/account/sign-up', { body: { email, password: PASSWORD } })).status, 201);
      const token = (await logIn(t.client, email)).body['access-token'] as string;
      const body = { 'query/kind': 'payments/events', limit: 0, surprise: true };
      const english = await t.client('POST', '/api/cqrs/query', { headers: bearer(token), body });
      const spanish = await t.client('POST', '/api/cqrs/query', { headers: { ...bearer(token), 'accept-language': 'es' }, body });
      assert.equal(english.status, 400, english.text);
      assert.equal(spanish.status, 400, spanish.text);
      assert.equal(english.body.message, 'Invalid parameters for payments/events');
      assert.equal(spanish.body.message, 'Parámetros no válidos para payments/events');
      assert.equal(spanish.body.type, 'request-coercion');
      assert.equal(spanish.body.in, english.body.in);
      const paths = (res: typeof english) => (res.body.errors as Array<{ path: string }>).map((e) => e.path).sort();
      assert.deepEqual(paths(spanish), paths(english));
      const reasons = (res: typeof english) => (res.body.errors as Array<{ message: string }>).map((e) => e.message).join(' | ');
      assert.match(reasons(english), /must be >= 1/);
      assert.match(reasons(spanish), /debe ser >= 1/);
      assert.doesNotMatch(reasons(spanish), /must/);
    });

    it("a 202's message in the request's language: forgot-password, email sign-in", async () => {
      const english = await t.client('POST', '/api/account/forgot-password', { body: { email: uniqueEmail() } });
      assert.equal(english.status, 202);
      assert.equal(english.body.message, 'If an account uses this address, a link to reset its password is on its way. It expires in 1 hour.');
      const spanish = await t.client('POST', '/api/account/forgot-password', { headers: { 'accept-language': 'es' }, body: { email: uniqueEmail() } });
      assert.equal(spanish.status, 202);
      assert.equal(spanish.body.message, 'Si alguna cuenta usa esta dirección, un enlace para restablecer su contraseña va de camino. Caduca en 1 hora.');
      const german = await t.client('POST', '/api/auth/email/start', { headers: { cookie: 'locale=de' }, body: { email: uniqueEmail() } });
      assert.equal(german.status, 202);
      assert.equal(
        german.body.message,
        'Falls Sie sich mit dieser Adresse anmelden können, sind ein Link und ein Code unterwegs. Sie gelten einmal, für 15 Minuten.',
      );
    });

    it("sets the account's locale at sign-up from the browser's language, if the product has it", async () => {
      const spanish = await t.client('POST', '/api/account/sign-up', {
        headers: { 'accept-language': 'es-419,es;q=0.8' },
        body: { email: uniqueEmail(), password: PASSWORD },
      });
      assert.equal(spanish.status, 201, spanish.text);
      assert.equal(spanish.body.account.locale, 'es');
      const unknown = await t.client('POST', '/api/account/sign-up', {
        headers: { 'accept-language': 'fr' },
        body: { email: uniqueEmail(), password: PASSWORD },
      });
      assert.equal(unknown.body.account.locale, null);
      const cookie = await t.client('POST', '/api/account/sign-up', {
        headers: { 'accept-language': 'es', cookie: 'locale=ar' },
        body: { email: uniqueEmail(), password: PASSWORD },
      });
      assert.equal(cookie.body.account.locale, 'ar');
    });

    it("changes it with PATCH /api/account/me; the account's errors then speak it whatever the header", async () => {
      const email = uniqueEmail();
      assert.equal((await t.client('POST', '/api/account/sign-up', { body: { email, password: PASSWORD } })).status, 201);
      let token = (await logIn(t.client, email)).body['access-token'] as string;
      const set = await t.client('PATCH', '/api/account/me', { headers: bearer(token), body: { locale: 'de-AT' } });
      assert.equal(set.status, 200, set.text);
      assert.equal(set.body.locale, 'de', 'a regional tag is kept as its language');
      assert.equal(set.body.name, null, 'a body of the locale alone leaves the name');

      const refused = await t.client('PATCH', '/api/account/me', { headers: bearer(token), body: { locale: 'tlh' } });
      assert.equal(refused.status, 400);
      assert.equal(refused.body.type, 'request-coercion');
      assert.deepEqual(
        refused.body.errors.map((e: { path: string }) => e.path),
        ['/locale'],
      );
      assert.match(refused.body.errors[0].message, /en, de, es, ar/, 'names the supported ones');
      assert.equal((await t.client('PATCH', '/api/account/me', { headers: bearer(token), body: {} })).status, 400, 'an empty body changes nothing');

      // the next access token carries the account's language
      token = (await logIn(t.client, email)).body['access-token'] as string;
      const missing = await t.client('DELETE', `/api/account/sessions/${crypto.randomUUID()}`, { headers: { ...bearer(token), 'accept-language': 'es' } });
      assert.equal(missing.status, 404, missing.text);
      assert.equal(missing.body.message, 'Diese Sitzung gibt es nicht');

      const cleared = await t.client('PATCH', '/api/account/me', { headers: bearer(token), body: { locale: null } });
      assert.equal(cleared.body.locale, null);
      token = (await logIn(t.client, email)).body['access-token'] as string;
      const followsBrowser = await t.client('DELETE', `/api/account/sessions/${crypto.randomUUID()}`, {
        headers: { ...bearer(token), 'accept-language': 'es' },
      });
      assert.equal(followsBrowser.body.message, 'No existe esa sesión');
    });

    it("answers in the reader's language around the error step too: the file store's and the notification stream's refusals", async () => {
      const upload = await t.client('PUT', '/api/storage/uploads/not-a-token', {
        headers: { 'accept-language': 'de', 'content-type': 'application/octet-stream' },
        body: 'x',
      });
      assert.equal(upload.status, 403);
      assert.equal(upload.body.type, 'forbidden');
      assert.equal(upload.body.message, 'Die Upload-URL ist ungültig oder abgelaufen');
      const stream = await t.client('GET', '/api/notifications/stream', { headers: { 'accept-language': 'es', cookie: 'locale=es' } });
      assert.equal(stream.status, 401);
      assert.equal(stream.body.message, 'Se requiere autenticación');
      const english = await t.client('GET', '/api/notifications/stream');
      assert.equal(english.body.message, 'Authentication required');
    });
  });
}

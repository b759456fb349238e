/**
 * A software authenticator for tests: an EC P-256 key made with node:crypto, answering
 * registration options with a `none` attestation and sign-in options with an assertion, built
 * byte by byte as the WebAuthn spec lays them out (authenticator data, COSE key, CBOR
 * attestation object, ECDSA over authenticatorData || SHA-256(clientDataJSON)). The server's
 * library then verifies real structures, not mocks.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();

/** user present, user verified, attested credential data included */
const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

export interface AuthenticatorOptions {
  /** the origin the "browser" reports in the client data */
  origin: string;
  /** report user verification (default true) */
  userVerified?: boolean;
}

export interface CreationOptions {
  challenge: string;
  rp: { id?: string; name: string };
  user: { id: string; name: string };
}

export interface RequestOptions {
  challenge: string;
  rpId?: string;
}

export class SoftwareAuthenticator {
  readonly credentialId = randomBytes(16);
  private readonly privateKey: KeyObject;
  private readonly publicKey: KeyObject;
  /** the signature counter; tests may set it back to provoke a regression */
  counter = 0;
  userHandle: string | undefined;
  rpId: string | undefined;

  constructor(private readonly options: AuthenticatorOptions) {
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = pair.privateKey;
    this.publicKey = pair.publicKey;
  }

  get id(): string {
    return b64url(this.credentialId);
  }

  private clientData(type: 'webauthn.create' | 'webauthn.get', challenge: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin: this.options.origin, crossOrigin: false }));
  }

  private flags(extra = 0): number {
    return FLAG_UP | (this.options.userVerified === false ? 0 : FLAG_UV) | extra;
  }

  private counterBytes(): Buffer {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(this.counter);
    return b;
  }

  /** The COSE_Key of the public key: EC2, ES256, P-256. */
  private coseKey(): Uint8Array {
    const jwk = this.publicKey.export({ format: 'jwk' });
    return isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, new Uint8Array(Buffer.from(jwk.x!, 'base64url'))],
        [-3, new Uint8Array(Buffer.from(jwk.y!, 'base64url'))],
      ]),
    );
  }

  /** RegistrationResponseJSON for creation options, as `startRegistration` would resolve. */
  register(options: CreationOptions, overrides: { origin?: string; challenge?: string } = {}): Record<string, unknown> {
    this.rpId = options.rp.id;
    this.userHandle = options.user.id;
    const clientData = overrides.origin
      ? Buffer.from(
          JSON.stringify({ type: 'webauthn.create', challenge: overrides.challenge ?? options.challenge, origin: overrides.origin, crossOrigin: false }),
        )
      : this.clientData('webauthn.create', overrides.challenge ?? options.challenge);
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.credentialId.length);
    const authData = Buffer.concat([
      sha256(options.rp.id!),
      Buffer.from([this.flags(FLAG_AT)]),
      this.counterBytes(),
      Buffer.alloc(16), // AAGUID: none given
      idLength,
      this.credentialId,
      Buffer.from(this.coseKey()),
    ]);
    const attestationObject = isoCBOR.encode(
      new Map<string, string | Uint8Array | Map<string, string>>([
        ['fmt', 'none'],
        ['attStmt', new Map<string, string>()],
        ['authData', new Uint8Array(authData)],
      ]),
    );
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: { clientDataJSON: b64url(clientData), attestationObject: b64url(attestationObject), transports: ['internal'] },
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
    };
  }

  /** AuthenticationResponseJSON for request options; the counter grows by one first. */
  assert(options: RequestOptions, overrides: { counter?: number } = {}): Record<string, unknown> {
    this.counter = overrides.counter ?? this.counter + 1;
    const clientData = this.clientData('webauthn.get', options.challenge);
    const authData = Buffer.concat([sha256(options.rpId ?? this.rpId!), Buffer.from([this.flags()]), this.counterBytes()]);
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientData)]), this.privateKey);
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: {
        clientDataJSON: b64url(clientData),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        ...(this.userHandle ? { userHandle: this.userHandle } : {}),
      },
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
    };
  }
}

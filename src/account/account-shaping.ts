/**
 * What other modules plug into the account's API shape, so the account module knows no setting or
 * store of theirs: who the platform admins are (the admin module's rule: ADMIN_EMAILS, verified
 * addresses only; until it is plugged in, nobody is one), and the avatar's signed links (the files
 * module's; until then, no account has one).
 */
export type PlatformAdminRule = (account: { email: string; emailVerified: boolean }) => boolean;

/** An image's signed links: the original and its WebP renditions by width (docs/files.md). */
export interface ImageLinks {
  id: string;
  url: string;
  renditions: Record<'64' | '256', string>;
}

export type ImageLinker = (fileId: string) => ImageLinks;

export class AccountShaping {
  private rule: PlatformAdminRule = () => false;
  private linker: ImageLinker | undefined;

  /** Plugs in the platform-admin rule (the admin module, once). */
  use(rule: PlatformAdminRule): void {
    this.rule = rule;
  }

  /** Plugs in the avatar's links (the files module, once). */
  useImageLinks(linker: ImageLinker): void {
    this.linker = linker;
  }

  /** true for an account whose verified email the rule lists */
  has(account: { email: string; emailVerified: boolean }): boolean {
    return this.rule(account);
  }

  /** The avatar's links, made now (they expire), or null. */
  avatarOf(fileId: string | null): ImageLinks | null {
    return fileId && this.linker ? this.linker(fileId) : null;
  }
}

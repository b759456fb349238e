/**
 * Who the platform admins are, for the account shape's `platform-admin`. The rule is the admin
 * module's (src/admin/: ADMIN_EMAILS, verified addresses only), plugged in when it starts; the
 * account module only asks it, so it knows no setting of another module. Until a rule is
 * plugged in, nobody is one.
 */
export type PlatformAdminRule = (account: { email: string; emailVerified: boolean }) => boolean;

export class PlatformAdmins {
  private rule: PlatformAdminRule = () => false;

  /** Plugs in the rule (the admin module, once). */
  use(rule: PlatformAdminRule): void {
    this.rule = rule;
  }

  /** true for an account whose verified email the rule lists */
  has(account: { email: string; emailVerified: boolean }): boolean {
    return this.rule(account);
  }
}

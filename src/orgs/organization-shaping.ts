/**
 * What other modules plug into the organizations' API shapes, so this module knows no store of
 * theirs: the signed links of an organization's logo and of its members' avatars (the files
 * module's, plugged at its start; until then, none has one). The links are made when an answer
 * is shaped: they expire (docs/files.md).
 */
import type { ImageLinker, ImageLinks } from '../account/account-shaping.js';

export class OrganizationShaping {
  private linker: ImageLinker | undefined;

  /** Plugs in the images' links (the files module, once). */
  useImageLinks(linker: ImageLinker): void {
    this.linker = linker;
  }

  /** A logo's or an avatar's links, made now, or null. */
  imageOf(fileId: string | null): ImageLinks | null {
    return fileId && this.linker ? this.linker(fileId) : null;
  }
}

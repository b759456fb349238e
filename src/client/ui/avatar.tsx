/**
 * A picture (an account's avatar, an organization's logo) from its signed links, or the name's
 * initials when there is none, or when the picture does not load (a link is valid 5 minutes: an
 * image shown again much later may be refused until the page asks for new links).
 */
import { useState } from 'preact/hooks';
import type { ImageLinks } from '../shell/state.js';

const SIZES = {
  /** 28 px: the header */
  sm: { box: 'size-7 text-xs', rendition: '64' },
  /** 36 px: lists */
  md: { box: 'size-9 text-sm', rendition: '64' },
  /** 96 px: the settings' own picture */
  lg: { box: 'size-24 text-2xl', rendition: '256' },
} as const;

/** Up to two initials of a name or an address: `Ada Lovelace` → `AL`, `ada@example.com` → `A`. */
export function initialsOf(name: string): string {
  const words = name
    .split('@')[0]
    .split(/[\s._-]+/)
    .filter(Boolean);
  return (
    words
      .slice(0, 2)
      .map((w) => [...w][0])
      .join('')
      .toUpperCase() || '?'
  );
}

export function Avatar({
  image,
  name,
  size = 'sm',
  alt = '',
  square,
  id,
}: {
  image: ImageLinks | null | undefined;
  /** whose: the initials' source */
  name: string;
  size?: keyof typeof SIZES;
  /** empty (the default) when a name beside it says whose it is */
  alt?: string;
  /** an organization's logo: rounded corners rather than a circle */
  square?: boolean;
  id?: string;
}) {
  const [failed, setFailed] = useState<string | undefined>(undefined);
  const { box, rendition } = SIZES[size];
  const shape = square ? 'rounded-md' : 'rounded-full';
  const src = image?.renditions[rendition];
  if (src && src !== failed)
    return (
      <img
        id={id}
        src={src}
        alt={alt}
        data-image={image.id}
        class={`${box} ${shape} shrink-0 object-cover`}
        width={rendition === '64' ? 64 : 256}
        height={rendition === '64' ? 64 : 256}
        onError={() => setFailed(src)}
      />
    );
  const initials = `${box} ${shape} grid shrink-0 place-items-center bg-primary-soft font-semibold uppercase text-fg`;
  return alt ? (
    <span id={id} role="img" aria-label={alt} data-image="none" class={initials}>
      {initialsOf(name)}
    </span>
  ) : (
    <span id={id} aria-hidden="true" data-image="none" class={initials}>
      {initialsOf(name)}
    </span>
  );
}

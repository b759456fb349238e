/**
 * TypeScript positions for the compiled server's code, read from the `.js.map` beside a file only
 * when a logged stack or a signal's line first needs it. `node --enable-source-maps` would do the
 * same for every frame, but it reads and keeps the map of every module at load, ours and
 * node_modules' (5–7 MB of resident memory on the embedded default, docs/performance.md
 * "footprint, round 3"), for what is needed when an error is logged. Under tsx or with the flag,
 * Node already knows the maps: they are used as they are.
 */
import { readFileSync } from 'node:fs';
import { findSourceMap, SourceMap } from 'node:module';
import { dirname, isAbsolute, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The app's compiled (or source) tree: `dist/` or `src/`, this file's grandparent. Only its files'
 * maps are read: a logged message quoting some other path must not make the logger read files.
 */
export const APP_ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
/** a frame line longer than this is not rewritten (a frame is a name and a location) */
const MAX_FRAME_LINE = 1000;

export interface SourcePosition {
  file: string;
  /** 1-based */
  line: number;
  /** 1-based */
  column: number;
}

interface LoadedMap {
  map: SourceMap;
  dir: string;
}

/** maps read so far (null: the file has none); cleared when full, as stacks name few files */
const loaded = new Map<string, LoadedMap | null>();
const MAX_LOADED = 256;

function pathOf(file: string): string {
  return file.startsWith('file://') ? fileURLToPath(file) : file;
}

function mapBeside(path: string, root: string): LoadedMap | null {
  // the app's own compiled files only: a dependency's frames (and any other path) stay as they are
  if (!path.endsWith('.js') || !isAbsolute(path) || !path.startsWith(root + sep) || path.includes(`${sep}node_modules${sep}`)) return null;
  let found = loaded.get(path);
  if (found !== undefined) return found;
  found = null;
  try {
    found = { map: new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8'))), dir: dirname(path) };
  } catch {
    // no map (or not one we can read): the JS position stands
  }
  if (loaded.size >= MAX_LOADED) loaded.clear();
  loaded.set(path, found);
  return found;
}

/**
 * Where a 1-based `line`:`column` of `file` (a path or a file: URL) comes from, if a source map
 * says: Node's (tsx, `--enable-source-maps`), or the `.js.map` beside a file under `root`.
 */
export function originalPosition(file: string, line: number, column: number, root = APP_ROOT): SourcePosition | undefined {
  try {
    let entry: ReturnType<SourceMap['findEntry']>;
    let dir = '';
    const known = findSourceMap(file);
    if (known) {
      entry = known.findEntry(line - 1, column - 1);
    } else {
      const beside = mapBeside(pathOf(file), root);
      if (!beside) return undefined;
      entry = beside.map.findEntry(line - 1, column - 1);
      dir = beside.dir;
    }
    if (!entry || !('originalLine' in entry) || typeof entry.originalLine !== 'number') return undefined;
    let source = entry.originalSource;
    if (source.startsWith('file://')) source = fileURLToPath(source);
    else if (dir && !isAbsolute(source)) source = resolve(dir, source);
    return { file: source, line: entry.originalLine + 1, column: entry.originalColumn + 1 };
  } catch {
    // a map we cannot read or a source we cannot name: the JS position stands
    return undefined;
  }
}

// a frame line: `    at name (/abs/file.js:12:5)` or `    at /abs/file.js:12:5` (a file: URL too);
// anchored at both ends, so a message's text is never taken for one and nothing backtracks far
const FRAME_LINE = /^(\s+at (?:[^(]* \()?)((?:file:\/\/)?\/[^\s():]+\.js):(\d+):(\d+)(\)?)$/;

/** A stack whose frame lines in the app's compiled files (under `root`) name their TypeScript lines instead. */
export function sourceStack(stack: string, root = APP_ROOT): string {
  if (!stack.includes('.js:')) return stack;
  return stack
    .split('\n')
    .map((text) => {
      if (text.length > MAX_FRAME_LINE || !text.startsWith('    at ')) return text;
      const frame = FRAME_LINE.exec(text);
      if (!frame) return text;
      const [, before, file, line, column, after] = frame;
      const original = originalPosition(file, Number(line), Number(column), root);
      return original ? `${before}${original.file}:${original.line}:${original.column}${after}` : text;
    })
    .join('\n');
}

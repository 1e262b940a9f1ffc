/**
 * `native-node start --help`, generated from
 * CONFIG_OPTIONS (node/config.ts), the table `start`'s parser, the config file and the
 * environment read: every flag is listed, none can drift. Unknown flags get the nearest one
 * suggested (`nearestFlag`).
 */
import { distance } from 'fastest-levenshtein';
import { CONFIG_OPTIONS, type ConfigOption } from '../node/config.js';

/** How a flag is written: `--flag <value>`, `--[no-]flag` for booleans, `--flag <value>…` for repeatable ones. */
export function flagUsage(o: ConfigOption): string {
  if (o.kind === 'boolean') return `--[no-]${o.flag}`;
  return `--${o.flag} <${o.kind === 'integer' || o.kind === 'number' ? 'n' : 'value'}>${o.kind === 'list' ? '…' : ''}`;
}

/** Wraps `text` at `width` columns with `indent` before every line. */
export function wrap(text: string, width: number, indent: string): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && indent.length + line.length + 1 + word.length > width) {
      lines.push(indent + line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(indent + line);
  return lines;
}

/** `native-node start --help`: every option with its description, environment variable, config key and default. */
export function startHelp(): string {
  const out = [
    'Usage: npx native-node start [flags]',
    '',
    'Runs a node. Every flag is also an environment variable and a key of the JSON config file',
    '(--config); the command line wins over the environment, which wins over the file.',
    'Details: docs/operators-guide.md.',
    '',
    'Flags:',
  ];
  for (const o of CONFIG_OPTIONS) {
    out.push(`  ${flagUsage(o)}`);
    out.push(...wrap(`${o.description}. Env ${o.env}, config "${o.key}", default: ${o.defaultText}.`, 100, '      '));
  }
  out.push('  -h, --help', '      show this help', '', 'Example:', `  ${START_EXAMPLE}`);
  return out.join('\n');
}

/** The known flag nearest to an unknown one (at most 3 edits, or a prefix), for "did you mean". */
export function nearestFlag(unknown: string, flags: readonly string[] = CONFIG_OPTIONS.map((o) => o.flag)): string | undefined {
  const name = unknown.replace(/^-+/, '').replace(/^no-/, '');
  let best: { flag: string; d: number } | undefined;
  for (const f of flags) {
    // Two letters swapped (--wiat) count as one edit, as people make them.
    const swapped = name.length === f.length && [...name].sort().join('') === [...f].sort().join('') && [...name].filter((c, i) => c !== f[i]).length === 2;
    const d = f.startsWith(name) && name.length >= 3 ? 0.5 : swapped ? 1 : distance(name, f);
    if (!best || d < best.d) best = { flag: f, d };
  }
  return best && best.d <= Math.min(3, Math.max(1, Math.floor(name.length / 3))) ? best.flag : undefined;
}

/**
 * parseArgs' refusal in plain words: `unknown flag --x (did you mean --y?)` when one of `options`
 * is near (nearestFlag: a few edits, or a prefix), `--x needs a value`, `--x takes no value`;
 * every command's parser words its refusals so (the command line adds which --help to read).
 */
export function withSuggestion(message: string, options: Readonly<Record<string, unknown>>): string {
  const missing = /^Option '(--?[\w-]+)(?: <value>)?' argument missing/.exec(message);
  if (missing) return `${missing[1]} needs a value`;
  const extra = /^Option '(--?[\w-]+)' does not take an argument/.exec(message);
  if (extra) return `${extra[1]} takes no value`;
  const m = /Unknown option '(--?[^']+)'/.exec(message);
  if (!m) return message;
  const near = nearestFlag(m[1], Object.keys(options));
  if (!near) return `unknown flag ${m[1]}`;
  // --no-mien → --no-mine: a negated boolean stays negated.
  const negated = m[1].startsWith('--no-') && (options[near] as { type?: string } | undefined)?.type === 'boolean';
  return `unknown flag ${m[1]} (did you mean --${negated ? 'no-' : ''}${near}?)`;
}

/** `e` in plain words when it is parseArgs' refusal of a start flag, with "did you mean --x?" when a flag is near. */
export function withFlagSuggestion(e: unknown): unknown {
  if (!(e instanceof Error) || !/^(Unknown option|Option ')/.test(e.message)) return e;
  const m = /Unknown option '(--?[^']+)'/.exec(e.message);
  const near = m ? nearestFlag(m[1]) : undefined;
  const negated = near && m![1].startsWith('--no-') && CONFIG_OPTIONS.find((o) => o.flag === near)?.kind === 'boolean';
  e.message = m
    ? `unknown flag ${m[1]}${near ? ` (did you mean --${negated ? 'no-' : ''}${near}?)` : ''}; npx native-node start --help lists every flag`
    : `${withSuggestion(e.message, {})}; npx native-node start --help lists every flag`;
  return e;
}

/** The example at the end of `start --help`. */
export const START_EXAMPLE = 'npx native-node start --dev --http-port 8402';

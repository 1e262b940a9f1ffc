/**
 * `native-node start --help` and the start section of the global help, generated from
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
function wrap(text: string, width: number, indent: string): string[] {
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
    'Usage: native-node start [flags]',
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
  out.push('  -h, --help', '      show this help');
  return out.join('\n');
}

/** The start section of the global help: every flag, wrapped. */
export function startFlagsSummary(indent = '      '): string {
  const lines: string[] = [];
  let line = '';
  for (const unit of CONFIG_OPTIONS.map(flagUsage)) {
    if (line && indent.length + line.length + 2 + unit.length > 100) {
      lines.push(indent + line);
      line = unit;
    } else line = line ? `${line}  ${unit}` : unit;
  }
  if (line) lines.push(indent + line);
  return lines.join('\n');
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
 * parseArgs' message, with "did you mean --x?" when it is an unknown option and one of `options`
 * is near (nearestFlag: a few edits, or a prefix): every command's parser words its refusals so.
 */
export function withSuggestion(message: string, options: Readonly<Record<string, unknown>>): string {
  const m = /Unknown option '(--?[^']+)'/.exec(message);
  if (!m) return message;
  const near = nearestFlag(m[1], Object.keys(options));
  if (!near) return message;
  // --no-mien → --no-mine: a negated boolean stays negated.
  const negated = m[1].startsWith('--no-') && (options[near] as { type?: string } | undefined)?.type === 'boolean';
  return `${message} (did you mean --${negated ? 'no-' : ''}${near}?)`;
}

/** `e` with "did you mean --x?" added when it is parseArgs' "Unknown option '--y'" and a flag is near. */
export function withFlagSuggestion(e: unknown): unknown {
  const m = e instanceof Error ? /Unknown option '(--?[^']+)'/.exec(e.message) : null;
  const near = m ? nearestFlag(m[1]) : undefined;
  if (e instanceof Error && near) e.message = `${e.message} (did you mean --${near}? native-node start --help lists every flag)`;
  else if (e instanceof Error && m) e.message = `${e.message} (native-node start --help lists every flag)`;
  return e;
}

/**
 * `native-node <command> --help` for the commands other than `start`: the global usage's lines
 * of that command (its entry and the lines indented under it) and the common options; undefined
 * for a command the usage does not list.
 */
export function commandHelp(usage: string, command: string): string | undefined {
  const lines = usage.split('\n');
  const out: string[] = [];
  let inCmd = false;
  for (const l of lines) {
    const entry = /^ {2}(\S.*)$/.exec(l);
    if (entry) inCmd = new RegExp(`(^|[ ,|])${command.replace(/[-/\\^$*+?.()|[\]{}]/g, '\\$&')}( |$|\\||,)`).test(entry[1].split(/ {2,}/)[0]);
    else if (!/^ {4,}\S/.test(l)) inCmd = false;
    if (inCmd) out.push(l);
  }
  if (out.length === 0) return undefined;
  const options = lines.slice(lines.findIndex((l) => l === 'Options:'));
  return [`Usage: native-node ${command} …`, '', ...out, '', ...options].join('\n');
}

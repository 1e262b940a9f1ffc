/**
 * The shape of one configurable option and of a layer of raw settings: shared by the option
 * tables (node/config.ts, node/outboundConfig.ts, node/providersConfig.ts) without an import
 * circle between them.
 */

/** `list`: a repeatable flag, a JSON array in the file, comma-separated in the environment. */
export type OptionKind = 'string' | 'integer' | 'number' | 'boolean' | 'list';

/** One configurable option: its key in the config file, its flag, its environment variable. */
export interface ConfigOption {
  /** Key in the JSON config file and in `NodeConfig`. */
  readonly key: string;
  /** Long flag without dashes. */
  readonly flag: string;
  readonly env: string;
  readonly kind: OptionKind;
  readonly schema: Record<string, unknown>;
  readonly description: string;
  /** Default as shown in the help and the operator's guide. */
  readonly defaultText: string;
  /** Collected into `NodeConfig.outbound` or `NodeConfig.providers` instead of a field of its own. */
  readonly group?: 'outbound' | 'provider';
  /** Built-in value of a grouped option (the others have theirs in `defaultNodeConfig`). */
  readonly default?: string | number | boolean;
}

/** One layer of raw settings (file, environment or flags), keyed like the config file. */
export type ConfigLayer = Record<string, string | number | boolean | readonly string[] | undefined>;
/** Where a setting came from, for error messages. */
export type ConfigSource = 'default' | 'file' | 'env' | 'flag';


/**
 * The free boards: `/api/x402/requests`, where agents post a wanted service (title,
 * description, category, max price), and `/api/x402/community`, a lobby of short messages by
 * topic. Posts are signed with a chain key (the inbox signature, x402/providers/inboxAuth.ts), size-capped,
 * rate-limited per key and per IP, kept in LevelDB (`b:<board>:<time>:<id>` in the providers
 * database) and listed newest first with paging and search. A moderator key of the chain
 * parameters can hide a message.
 */
import { randomBytes } from 'node:crypto';
import type { Level } from 'level';
import { NodeError } from '../consensus/errors.js';
import { REGISTRY_CATEGORIES } from '../consensus/registryState.js';
import { parseAmount } from '../consensus/amount.js';
import { RATE_LIMITED, RateLimiter } from './rateLimit.js';

/** Error codes of the boards. */
export const BoardErrorCode = {
  BAD_POST: 'board_bad_post',
  RATE_LIMITED,
  NOT_FOUND: 'board_post_not_found',
  NOT_MODERATOR: 'board_not_moderator',
  BAD_QUERY: 'board_bad_query',
} as const;

/** HTTP statuses of the board codes. */
export const BOARD_HTTP_STATUS: Readonly<Record<string, number>> = {
  [BoardErrorCode.BAD_POST]: 400,
  [BoardErrorCode.RATE_LIMITED]: 429,
  [BoardErrorCode.NOT_FOUND]: 404,
  [BoardErrorCode.NOT_MODERATOR]: 403,
  [BoardErrorCode.BAD_QUERY]: 400,
};

/** The two boards. */
export type BoardName = 'requests' | 'community';

/** One post as stored and listed. */
export interface BoardPost {
  readonly id: string;
  readonly board: BoardName;
  /** Signer's address. */
  readonly author: string;
  readonly createdAt: number;
  readonly fields: Readonly<Record<string, string>>;
  hidden?: boolean;
}

/** Limits of the boards. */
export interface BoardOptions {
  /** Posts per key per window. */
  readonly perKey: number;
  /** Posts per IP per window. */
  readonly perIp: number;
  readonly windowMs: number;
  /** Posts kept per board (oldest dropped). */
  readonly maxPosts: number;
  readonly now?: () => number;
}

/** Defaults of BoardOptions: 5 posts a minute per key, 20 per IP, 10,000 posts per board. */
export const defaultBoardOptions: BoardOptions = { perKey: 5, perIp: 20, windowMs: 60_000, maxPosts: 10_000 };

const bad = (message: string) => new NodeError(BoardErrorCode.BAD_POST, message);

function text(body: Record<string, unknown>, key: string, max: number, required: boolean): string {
  const v = body[key];
  if (v === undefined || v === null || v === '') {
    if (required) throw bad(`${key} is required`);
    return '';
  }
  if (typeof v !== 'string') throw bad(`${key} must be a string`);
  if (v.length > max) throw bad(`${key} is longer than ${max} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0008\u000b-\u001f\u007f]/.test(v)) throw bad(`${key} contains control characters`);
  return v.trim();
}

/** Checks and normalises a post's fields for `board`. */
export function checkPostFields(board: BoardName, body: unknown): Record<string, string> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw bad('the body must be a JSON object');
  const b = body as Record<string, unknown>;
  const allowed = board === 'requests' ? ['title', 'description', 'category', 'maxPrice'] : ['topic', 'text'];
  for (const k of Object.keys(b)) if (!allowed.includes(k)) throw bad(`${k} is not a field of a ${board} post (${allowed.join(', ')})`);
  if (board === 'community') {
    const topic = text(b, 'topic', 40, true);
    if (!/^[a-z0-9][a-z0-9-]*$/.test(topic)) throw bad('topic is 1-40 of a-z, 0-9 and -');
    return { topic, text: text(b, 'text', 500, true) };
  }
  const category = text(b, 'category', 32, true);
  if (!(REGISTRY_CATEGORIES as readonly string[]).includes(category)) throw bad(`category must be one of ${REGISTRY_CATEGORIES.join(', ')}`);
  const maxPrice = text(b, 'maxPrice', 24, true);
  try {
    parseAmount(maxPrice);
  } catch {
    throw bad('maxPrice is a NATIVE amount such as "0.05"');
  }
  return { title: text(b, 'title', 120, true), description: text(b, 'description', 2000, true), category, maxPrice };
}

/** The boards (see module comment). */
export class Boards {
  private readonly posts: Record<BoardName, BoardPost[]> = { requests: [], community: [] };
  private readonly opts: BoardOptions;
  private readonly now: () => number;
  private readonly perKey: RateLimiter;
  private readonly perIp: RateLimiter;

  constructor(
    private readonly db: Level<string, string>,
    opts: Partial<BoardOptions> = {},
  ) {
    this.opts = { ...defaultBoardOptions, ...opts };
    this.now = opts.now ?? Date.now;
    this.perKey = new RateLimiter(this.opts.perKey, this.opts.windowMs, this.now);
    this.perIp = new RateLimiter(this.opts.perIp, this.opts.windowMs, this.now);
  }

  /** Loads the stored posts. */
  async start(): Promise<void> {
    for await (const [, v] of this.db.iterator({ gte: 'b:', lt: 'b;' })) {
      const p = JSON.parse(v) as BoardPost;
      this.posts[p.board].push(p);
    }
  }

  /**
   * Counts a post attempt from `ip` before its signature is checked (a verification costs more than
   * this check); 429 `rate_limited` past the per-IP rate.
   */
  admitIp(ip: string): void {
    this.perIp.hit(ip, 'posts from this address');
  }

  /** Adds a signed post (author verified by the caller); 429 `rate_limited` past the per-key rate. */
  async post(board: BoardName, author: string, body: unknown): Promise<BoardPost> {
    const fields = checkPostFields(board, body);
    this.perKey.hit(author, 'posts by this key');
    const post: BoardPost = { id: randomBytes(8).toString('hex'), board, author, createdAt: this.now(), fields };
    const list = this.posts[board];
    list.push(post);
    const batch: ({ type: 'put'; key: string; value: string } | { type: 'del'; key: string })[] = [{ type: 'put', key: keyOf(post), value: JSON.stringify(post) }];
    while (list.length > this.opts.maxPosts) batch.push({ type: 'del', key: keyOf(list.shift()!) });
    await this.db.batch(batch);
    return post;
  }

  /** Hides a post (moderator). */
  async hide(board: BoardName, id: string): Promise<BoardPost> {
    const post = this.posts[board].find((p) => p.id === id);
    if (!post) throw new NodeError(BoardErrorCode.NOT_FOUND, `no post ${id} on /api/x402/${board}`);
    post.hidden = true;
    await this.db.put(keyOf(post), JSON.stringify(post));
    return post;
  }

  /** Lists visible posts newest first: `q` (every word in some field), `category` / `topic`, `limit` 1-100 (20), `offset` 0-10,000. */
  list(board: BoardName, query: Record<string, unknown>): { total: number; limit: number; offset: number; posts: BoardPost[] } {
    const one = (k: string): string | undefined => {
      const v = query[k];
      if (v === undefined || v === '') return undefined;
      if (typeof v !== 'string' || v.length > 200) throw new NodeError(BoardErrorCode.BAD_QUERY, `${k} must be one value of at most 200 characters`);
      return v;
    };
    const int = (k: string, def: number, min: number, max: number) => {
      const v = one(k);
      if (v === undefined) return def;
      if (!/^\d{1,6}$/.test(v) || Number(v) < min || Number(v) > max) throw new NodeError(BoardErrorCode.BAD_QUERY, `${k} must be an integer from ${min} to ${max}`);
      return Number(v);
    };
    const limit = int('limit', 20, 1, 100);
    const offset = int('offset', 0, 0, 10_000);
    const words = (one('q') ?? '').toLowerCase().split(/\s+/).filter(Boolean);
    const filterKey = board === 'requests' ? 'category' : 'topic';
    const filter = one(filterKey);
    const matches = this.posts[board].filter(
      (p) => !p.hidden && (filter === undefined || p.fields[filterKey] === filter) && words.every((w) => Object.values(p.fields).some((f) => f.toLowerCase().includes(w))),
    );
    matches.reverse();
    return { total: matches.length, limit, offset, posts: matches.slice(offset, offset + limit) };
  }
}

function keyOf(p: BoardPost): string {
  return `b:${p.board}:${String(p.createdAt).padStart(15, '0')}:${p.id}`;
}

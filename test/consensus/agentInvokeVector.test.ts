/**
 * The test vector of docs/agents-guide.md ("The invoke, byte by byte"): an agent_invoke and its
 * request commitment built from fixed inputs (test/fixtures/agent-invoke-vector.json) must come
 * out byte for byte — commitment, payload, unsigned envelope, sighash, both signatures (ML-DSA-87
 * signs deterministically), signed bytes and tx id — and the signed bytes must decode back to the
 * inputs and verify. A Python or Go implementation checks itself against the same file; the agent
 * package's installed build is checked against it too (test/integration/agentPackage.test.ts).
 *
 * The guide cannot drift from either: its text is parsed and every value it prints — the byte
 * layouts (run as written), the worked commitment example, the vector table, the sizes and
 * derivation strings in its prose — is compared with the fixture and with the node's code.
 */
import { describe, expect, test } from '@jest/globals';
import { ed25519 } from '@noble/curves/ed25519.js';
import { hkdf } from '@noble/hashes/hkdf.js';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { ml_dsa87 } from '@noble/post-quantum/ml-dsa.js';
import { readFileSync } from 'node:fs';
import { encodeAddress } from '../../consensus/address.js';
import { Writer } from '../../consensus/codec.js';
import { fromHex, sha256, taggedHash, toHex } from '../../consensus/hash.js';
import { ADDRESS_SIZE, createKeyPairFromSeed, ED25519_PUBLIC_KEY_SIZE, ED25519_SIGNATURE_SIZE, MLDSA_PUBLIC_KEY_SIZE, MLDSA_SIGNATURE_SIZE, verifyHybridReference } from '../../consensus/keys.js';
import { decodeTx, encodeTx, encodeUnsignedTx, signTx, SIGHASH_TAG, txId, txSighash, TxType, TX_VERSION } from '../../consensus/tx.js';
import { agentInvoke } from '../../consensus/txTypes/agentInvoke.js';
import { COMMITMENT_SCHEME, requestCommitment } from '../../x402/core/wire.js';

const V = JSON.parse(readFileSync(new URL('../fixtures/agent-invoke-vector.json', import.meta.url), 'utf8')) as Record<string, any>;
const key = createKeyPairFromSeed(fromHex(V.key.seed));
const unsigned = {
  version: TX_VERSION,
  chainId: V.invoke.chainId as number,
  type: TxType.agent_invoke,
  from: key.address,
  nonce: BigInt(V.invoke.nonce),
  fee: BigInt(V.invoke.fee),
  payload: agentInvoke.encodePayload({ serviceId: V.invoke.serviceId, payTo: fromHex(V.invoke.payTo), amount: BigInt(V.invoke.amount), requestHash: fromHex(V.commitment.requestHash) }),
};

describe('agent_invoke test vector', () => {
  test('the wallet seed derives the documented keys and address', () => {
    expect(toHex(key.address)).toBe(V.key.accountId);
    expect(encodeAddress(key.address, 'tnative')).toBe(V.key.address);
    expect(toHex(key.publicKey.ed25519)).toBe(V.key.ed25519PublicKey);
    expect(toHex(sha256(key.publicKey.mldsa))).toBe(V.key.mldsaPublicKeySha256);
  });

  test('the request commitment: sellerId ‖ first 24 bytes of sha256(tag ‖ sellerId ‖ u8 len ‖ serviceId ‖ u32be len ‖ request ‖ salt)', () => {
    const c = V.commitment;
    expect(requestCommitment({ sellerId: c.sellerId, serviceId: c.serviceId, request: c.request, salt: c.salt })).toBe(c.requestHash);
    // The same bytes spelled out as the guide does, independently of requestCommitment.
    const enc = new TextEncoder();
    const service = enc.encode(c.serviceId);
    const request = enc.encode(c.request);
    const len = new Uint8Array(4);
    new DataView(len.buffer).setUint32(0, request.length, false);
    const msg = Buffer.concat([enc.encode(COMMITMENT_SCHEME), fromHex(c.sellerId), Uint8Array.of(service.length), service, len, request, fromHex(c.salt)]);
    expect(`${c.sellerId}${toHex(sha256(msg)).slice(0, 48)}`).toBe(c.requestHash);
  });

  test('payload, unsigned envelope and sighash', () => {
    expect(toHex(unsigned.payload)).toBe(V.payload);
    expect(toHex(encodeUnsignedTx(unsigned))).toBe(V.unsigned);
    expect(toHex(txSighash(unsigned))).toBe(V.sighash);
    // sighash = sha256(sha256(tag) ‖ sha256(tag) ‖ unsigned)
    const t = sha256(new TextEncoder().encode(SIGHASH_TAG));
    expect(toHex(sha256(Buffer.concat([t, t, fromHex(V.unsigned)])))).toBe(V.sighash);
    expect(toHex(taggedHash(SIGHASH_TAG, fromHex(V.unsigned)))).toBe(V.sighash);
  });

  test('signatures, signed bytes and tx id (ML-DSA-87 deterministic, Ed25519)', () => {
    const tx = signTx(unsigned, key);
    expect(toHex(tx.signature.ed25519)).toBe(V.ed25519Signature);
    expect(toHex(sha256(tx.signature.mldsa))).toBe(V.mldsaSignatureSha256);
    const bytes = encodeTx(tx);
    expect(toHex(bytes)).toBe(V.tx);
    expect(toHex(txId(bytes))).toBe(V.txId);
    // signed = unsigned ‖ mldsaSig(4627) ‖ ed25519Sig(64)
    expect(V.tx).toBe(`${V.unsigned}${toHex(tx.signature.mldsa)}${V.ed25519Signature}`);
  });

  test('the signed bytes decode back to the inputs and verify with the public key', () => {
    const tx = decodeTx(fromHex(V.tx));
    expect(tx.type).toBe(TxType.agent_invoke);
    expect(tx.chainId).toBe(V.invoke.chainId);
    expect(tx.nonce).toBe(BigInt(V.invoke.nonce));
    expect(tx.fee).toBe(BigInt(V.invoke.fee));
    expect(tx.publicKey).toBeUndefined();
    const p = agentInvoke.decodePayload(tx.payload);
    expect(p.serviceId).toBe(V.invoke.serviceId);
    expect(toHex(p.payTo)).toBe(V.invoke.payTo);
    expect(p.amount).toBe(BigInt(V.invoke.amount));
    expect(toHex(p.requestHash!)).toBe(V.commitment.requestHash);
    expect(verifyHybridReference(key.publicKey, fromHex(V.sighash), tx.signature)).toBe(true);
  });
});

/*
 * The guide's own text, parsed: its byte layouts are run as written (each term of a layout line
 * encodes one field), its worked commitment example and its vector table compared value by value
 * with the fixture and with what the node's code computes. A changed line in the guide, the
 * fixture or the code fails here; a row added to a table without a check fails too.
 */
const GUIDE = readFileSync(new URL('../../docs/agents-guide.md', import.meta.url), 'utf8');
const utf8 = (s: string) => new TextEncoder().encode(s);

/** The text under a heading of the guide, up to the next heading (lines inside code blocks are not headings). */
function guideSection(heading: string): string {
  const lines = GUIDE.split('\n');
  let inCode = false;
  let start = -1;
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith('```')) inCode = !inCode;
    else if (!inCode && /^#{1,4} /.test(line)) {
      if (start >= 0) break;
      if (line.replace(/^#+ /, '') === heading) start = i;
      continue;
    }
    if (start >= 0) out.push(line);
  }
  if (start < 0) throw new Error(`docs/agents-guide.md has no heading "${heading}"`);
  return out.join('\n');
}

/** The code blocks of a section. */
const codeBlocks = (text: string): string[] => [...text.matchAll(/```[a-z]*\n([\s\S]*?)```/g)].map((m) => m[1]!);

/** The two-column table of a section: first cell (bold marks dropped) → second cell. */
function guideTable(text: string): Map<string, string> {
  const rows = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^\|\s*(.*?)\s*\|\s*(.*?)\s*\|$/.exec(line);
    if (!m || m[1] === '' || /^-+$/.test(m[1]!)) continue;
    rows.set(m[1]!.replace(/\*\*/g, ''), m[2]!);
  }
  return rows;
}

/** The backticked values of a cell; `xy` × n stands for n copies of xy. */
const ticks = (cell: string): string[] => [...cell.matchAll(/`([^`]*)`(?: × (\d+))?/g)].map((m) => (m[2] ? m[1]!.repeat(Number(m[2])) : m[1]!));
/** The one backticked value of a cell. */
function tick(cell: string | undefined): string {
  const t = ticks(cell ?? '');
  expect(t).toHaveLength(1);
  return t[0]!;
}

/** `name = term ‖ term …` definitions of a code block: continuation lines joined, `-- comments` dropped. */
function definitions(block: string): Map<string, string> {
  const defs = new Map<string, string>();
  let last = '';
  for (const raw of block.split('\n')) {
    const line = raw.replace(/\s+--\s.*$/, '').trim();
    if (!line) continue;
    const m = /^(\w+)\s+=\s+(.*)$/.exec(line);
    if (m) defs.set((last = m[1]!), m[2]!);
    else defs.set(last, `${defs.get(last)} ${line}`);
  }
  return defs;
}

/** Splits `a ‖ b ‖ [‖ c]` at the top level (not inside parentheses or brackets). */
function terms(expr: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  // An optional group follows its term without a separator of its own: "u8 hasKey [‖ …]".
  for (const ch of expr.replace(/\s*\[/g, ' ‖ [')) {
    if (ch === '(' || ch === '[') depth++;
    if (ch === ')' || ch === ']') depth--;
    if (ch === '‖' && depth === 0) {
      out.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  out.push(cur.trim());
  return out.filter((t) => t !== '');
}

type Fields = Record<string, number | bigint | string | Uint8Array>;

/** Encodes the invoke layout's terms as the guide writes them (integers little-endian). */
function encodeLayout(expr: string, f: Fields): Uint8Array {
  const w = new Writer();
  const field = (name: string) => {
    if (!(name in f)) throw new Error(`the guide's layout names ${name}, which the test does not know`);
    return f[name]!;
  };
  for (const t of terms(expr)) {
    let m: RegExpExecArray | null;
    if ((m = /^\[(.*)\]$/.exec(t))) {
      if (f.hasKey === 1) w.raw(encodeLayout(m[1]!, f));
    } else if ((m = /^u8 (\w+)(?: \((.*)\))?$/.exec(t))) {
      const v = /^\d+$/.test(m[1]!) ? Number(m[1]) : Number(field(m[1]!));
      // "version (1)", "type (2 = agent_invoke)": the guide's value is the code's.
      const note = m[2] !== undefined ? /^(\d+)(?: = (\w+))?$/.exec(m[2]) : null;
      if (note) {
        expect(v).toBe(Number(note[1]));
        if (note[2]) expect(TxType[note[2] as keyof typeof TxType]).toBe(Number(note[1]));
      }
      w.u8(v);
    } else if ((m = /^u32 (\w+)$/.exec(t))) w.u32(Number(field(m[1]!)));
    else if ((m = /^varint (\w+)$/.exec(t))) w.varint(field(m[1]!) as bigint);
    else if ((m = /^bytes utf8\((\w+)\)$/.exec(t))) w.bytes(utf8(field(m[1]!) as string));
    else if ((m = /^bytes (\w+)$/.exec(t))) w.bytes(field(m[1]!) as Uint8Array);
    else if ((m = /^(\w+)(?:\((\d+)\))?$/.exec(t))) {
      const b = field(m[1]!) as Uint8Array;
      if (m[2]) expect([m[1], b.length]).toEqual([m[1], Number(m[2])]);
      w.raw(b);
    } else throw new Error(`a term of the guide's layout the test cannot read: "${t}"`);
  }
  return w.finish();
}

/** Encodes one term of the commitment's hashed bytes as the guide writes it (big-endian length). */
function encodeCommitmentTerm(t: string, f: Record<string, string>): Uint8Array {
  let m: RegExpExecArray | null;
  if ((m = /^utf8\("(.*)"\)$/.exec(t))) return utf8(m[1]!);
  if ((m = /^utf8\((\w+)\)$/.exec(t))) return utf8(f[m[1]!]!);
  if ((m = /^u8\(byte length of (\w+)\)$/.exec(t))) return Uint8Array.of(utf8(f[m[1]!]!).length);
  if ((m = /^u32 big-endian\(byte length of (\w+)\)$/.exec(t))) {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setUint32(0, utf8(f[m[1]!]!).length, false);
    return b;
  }
  if ((m = /^(\w+)\((\d+) bytes\)$/.exec(t))) {
    const b = fromHex(f[m[1]!]!);
    expect([m[1], b.length]).toEqual([m[1], Number(m[2])]);
    return b;
  }
  throw new Error(`a term of the guide's commitment the test cannot read: "${t}"`);
}

/** The guide's commitment definition: the clear prefix, how many hash bytes follow, the hashed terms. */
function commitmentDefinition(): { prefix: string; hashBytes: number; hashed: string[] } {
  const blocks = codeBlocks(guideSection('The request commitment (`extra.commitment` = `native-x402/request-commitment/v1`)'));
  expect(blocks).toHaveLength(1);
  const def = definitions(blocks[0]!).get('requestHash');
  const m = /^(.+?) ‖ first (\d+) bytes of sha256\((.*)\)$/.exec(def ?? '');
  if (!m) throw new Error(`the guide's requestHash definition is not "… ‖ first N bytes of sha256(…)": ${def}`);
  return { prefix: m[1]!, hashBytes: Number(m[2]), hashed: terms(m[3]!) };
}

/** The commitment computed from the guide's definition: the hashed bytes term by term, and the requestHash. */
function commitmentByGuide(f: Record<string, string>): { parts: string[]; requestHash: string } {
  const d = commitmentDefinition();
  const parts = d.hashed.map((t) => toHex(encodeCommitmentTerm(t, f)));
  const requestHash = toHex(encodeCommitmentTerm(d.prefix, f)) + toHex(sha256(fromHex(parts.join('')))).slice(0, 2 * d.hashBytes);
  return { parts, requestHash };
}

describe("the agents' guide prints what the fixture and the code give", () => {
  const commitmentText = guideSection('The request commitment (`extra.commitment` = `native-x402/request-commitment/v1`)');
  const invokeText = guideSection('The invoke, byte by byte');

  test('the commitment definition: the scheme name, 24 bytes of sha256 after the seller id', () => {
    const d = commitmentDefinition();
    expect(d.prefix).toBe('sellerId(8 bytes)');
    expect(d.hashBytes).toBe(24);
    expect(d.hashed[0]).toBe(`utf8("${COMMITMENT_SCHEME}")`);
    // requestCommitment of the fixture's inputs, and the guide's definition run on them.
    const c = V.commitment;
    expect(commitmentByGuide(c).requestHash).toBe(c.requestHash);
    expect(requestCommitment(c)).toBe(c.requestHash);
  });

  test('the worked commitment example: inputs, bytes hashed, sha256, requestHash, and without a request', () => {
    const rows = guideTable(commitmentText);
    expect([...rows.keys()]).toEqual(['sellerId', 'serviceId', 'request', 'salt', 'bytes hashed (109)', 'sha256', 'requestHash', 'the same without a request']);
    const input = { sellerId: tick(rows.get('sellerId')), serviceId: tick(rows.get('serviceId')), request: tick(rows.get('request')), salt: tick(rows.get('salt')) };
    // "(18 bytes)", "(13 bytes)": the byte lengths printed beside the inputs.
    expect(rows.get('serviceId')).toContain(`(${utf8(input.serviceId).length} bytes)`);
    expect(rows.get('request')).toContain(`(${utf8(input.request).length} bytes)`);
    const byGuide = commitmentByGuide(input);
    const printedParts = ticks(rows.get('bytes hashed (109)')!);
    expect(printedParts).toEqual(byGuide.parts);
    const hashed = fromHex(printedParts.join(''));
    expect(hashed.length).toBe(109);
    const digest = toHex(sha256(hashed));
    expect(tick(rows.get('sha256'))).toBe(digest);
    expect(tick(rows.get('requestHash'))).toBe(`${input.sellerId}${digest.slice(0, 48)}`);
    expect(tick(rows.get('requestHash'))).toBe(byGuide.requestHash);
    expect(tick(rows.get('requestHash'))).toBe(requestCommitment(input));
    expect(tick(rows.get('the same without a request'))).toBe(requestCommitment({ ...input, request: undefined }));
    expect(tick(rows.get('the same without a request'))).toBe(commitmentByGuide({ ...input, request: '' }).requestHash);
  });

  test('the byte layout, run as written, encodes the fixture: payload, unsigned (with and without the key), signed; sighash and txId formulas', () => {
    const blocks = codeBlocks(invokeText);
    expect(blocks).toHaveLength(1);
    const defs = definitions(blocks[0]!);
    expect([...defs.keys()]).toEqual(['signed', 'unsigned', 'payload', 'sighash', 'txId']);
    const tx = signTx(unsigned, key);
    const f: Fields = {
      version: TX_VERSION, chainId: V.invoke.chainId, type: TxType.agent_invoke, from: key.address, nonce: BigInt(V.invoke.nonce), fee: BigInt(V.invoke.fee),
      serviceId: V.invoke.serviceId, payTo: fromHex(V.invoke.payTo), amount: BigInt(V.invoke.amount), requestHash: fromHex(V.commitment.requestHash),
      hasKey: 0, mldsaPublicKey: key.publicKey.mldsa, ed25519PublicKey: key.publicKey.ed25519, mldsaSig: tx.signature.mldsa, ed25519Sig: tx.signature.ed25519,
    };
    f.payload = encodeLayout(defs.get('payload')!, f);
    expect(toHex(f.payload)).toBe(V.payload);
    f.unsigned = encodeLayout(defs.get('unsigned')!, f);
    expect(toHex(f.unsigned)).toBe(V.unsigned);
    expect(toHex(encodeLayout(defs.get('signed')!, f))).toBe(V.tx);
    // The key's branch: the code's encoding of the same invoke carrying its key.
    expect(toHex(encodeLayout(defs.get('unsigned')!, { ...f, hasKey: 1 }))).toBe(toHex(encodeUnsignedTx({ ...unsigned, publicKey: key.publicKey })));
    // The sizes the layout prints are the code's.
    expect(defs.get('signed')).toBe(`unsigned ‖ mldsaSig(${MLDSA_SIGNATURE_SIZE}) ‖ ed25519Sig(${ED25519_SIGNATURE_SIZE})`);
    expect(defs.get('unsigned')).toContain(`[‖ mldsaPublicKey(${MLDSA_PUBLIC_KEY_SIZE}) ‖ ed25519PublicKey(${ED25519_PUBLIC_KEY_SIZE})]`);
    expect(defs.get('unsigned')).toContain(`from(${ADDRESS_SIZE})`);
    // sighash = sha256( sha256(T) ‖ sha256(T) ‖ unsigned ), T = utf8("…"); txId = sha256(sha256(signed)).
    const sighash = /^sha256\( sha256\(T\) ‖ sha256\(T\) ‖ unsigned \),\s+T = utf8\("([^"]+)"\)$/.exec(defs.get('sighash')!);
    expect(sighash?.[1]).toBe(SIGHASH_TAG);
    const t = sha256(utf8(sighash![1]!));
    expect(toHex(sha256(Buffer.concat([t, t, f.unsigned])))).toBe(V.sighash);
    expect(defs.get('txId')).toMatch(/^sha256\(sha256\(signed\)\), written as hex in that byte order \(no reversal\)$/);
    expect(toHex(sha256(sha256(fromHex(V.tx))))).toBe(V.txId);
  });

  test("the prose: varint example, account id, key derivation, signature bytes, signed size, the printed tx's first bytes", () => {
    // "200000 → `c0 9a 0c`"
    const varint = /varint\*\* is unsigned LEB128[\s\S]*?(\d+) → `([0-9a-f ]+)`\)/.exec(invokeText);
    expect(varint).not.toBeNull();
    expect(toHex(new Writer().varint(BigInt(varint![1]!)).finish())).toBe(varint![2]!.replace(/ /g, ''));
    // The account id: the first 20 bytes of sha256(mldsaPublicKey ‖ ed25519PublicKey); addresses with the prefix tnative.
    expect(invokeText).toContain('the first 20 bytes of `sha256(mldsaPublicKey ‖ ed25519PublicKey)`');
    expect(toHex(sha256(Buffer.concat([key.publicKey.mldsa, key.publicKey.ed25519])).slice(0, 20))).toBe(V.key.accountId);
    expect(invokeText).toContain('the prefix `tnative` (devnet, testnets)');
    // HKDF-SHA256 with the printed salt and infos, from the fixture's seed, gives the code's keys.
    const hk = /HKDF-SHA256 with salt `([^`]+)` and info\s+`([^`]+)` gives the 32-byte ML-DSA-87 key-generation seed[\s\S]*?info `([^`]+)` the Ed25519 private key/.exec(invokeText);
    expect(hk).not.toBeNull();
    const seed = fromHex(V.key.seed);
    const mldsaSeed = hkdf(nobleSha256, seed, utf8(hk![1]!), utf8(hk![2]!), 32);
    expect(toHex(ml_dsa87.keygen(mldsaSeed).publicKey)).toBe(toHex(key.publicKey.mldsa));
    expect(toHex(ed25519.getPublicKey(hkdf(nobleSha256, seed, utf8(hk![1]!), utf8(hk![3]!), 32)))).toBe(V.key.ed25519PublicKey);
    // "(`unsigned` + 4,691 bytes)": the two signatures.
    const sigBytes = /the length of `signed` \(`unsigned` \+ ([\d,]+) bytes\)/.exec(invokeText);
    expect(Number(sigBytes?.[1]?.replace(/,/g, ''))).toBe(MLDSA_SIGNATURE_SIZE + ED25519_SIGNATURE_SIZE);
    // "The full signed hex (4,797 bytes) is the fixture's `tx`."
    const full = /The full signed hex \(([\d,]+) bytes\) is the fixture's `tx`/.exec(invokeText);
    expect(Number(full?.[1]?.replace(/,/g, ''))).toBe(V.tx.length / 2);
    // "the signed size in bytes (about 4.8 kB, 7.4 kB with the key)", for this invoke.
    const about = /the signed size in bytes \(about ([\d.]+) kB, ([\d.]+) kB with the key\)/.exec(guideSection('Pay: sign and broadcast an `agent_invoke`'));
    expect(about?.slice(1)).toEqual([(V.tx.length / 2 / 1000).toFixed(1), ((V.tx.length / 2 + MLDSA_PUBLIC_KEY_SIZE + ED25519_PUBLIC_KEY_SIZE) / 1000).toFixed(1)]);
    // `pay --print`'s example output starts as every devnet invoke does: version 1, chainId 1337.
    const printed = /"tx": "([0-9a-f]+)…"/.exec(guideSection('Signing without the SDK: `native-node pay --print`'));
    expect(V.tx.startsWith(printed?.[1] ?? '-')).toBe(true);
  });

  test('the vector table: every row equals the fixture and the values the node computes', () => {
    const rows = guideTable(invokeText);
    expect([...rows.keys()]).toEqual([
      'wallet seed', 'its address', 'Ed25519 public key', 'sha256 of the ML-DSA-87 public key', 'commitment inputs', 'requestHash', 'invoke',
      'payload (75 bytes)', 'unsigned (106 bytes)', 'sighash', 'Ed25519 signature', 'sha256 of the ML-DSA-87 signature', 'txId',
    ]);
    const tx = signTx(unsigned, key);
    const signed = encodeTx(tx);
    const row = (name: string, fixture: string, computed: string) => {
      expect([name, tick(rows.get(name))]).toEqual([name, fixture]);
      expect([name, fixture]).toEqual([name, computed]);
    };
    row('wallet seed', V.key.seed, toHex(key.seed));
    expect(ticks(rows.get('its address')!)).toEqual([V.key.address, V.key.accountId]);
    expect(rows.get('its address')).toMatch(/^`tnative1\w+` \(account id `[0-9a-f]{40}`\)$/);
    expect([V.key.address, V.key.accountId]).toEqual([encodeAddress(key.address, 'tnative'), toHex(key.address)]);
    row('Ed25519 public key', V.key.ed25519PublicKey, toHex(key.publicKey.ed25519));
    row('sha256 of the ML-DSA-87 public key', V.key.mldsaPublicKeySha256, toHex(sha256(key.publicKey.mldsa)));
    // sellerId `…`, serviceId `…`, request `…`, salt `ab` × 32
    const inputs = Object.fromEntries([...rows.get('commitment inputs')!.matchAll(/(\w+) `([^`]*)`(?: × (\d+))?/g)].map((m) => [m[1], m[3] ? m[2]!.repeat(Number(m[3])) : m[2]])) as { sellerId: string; serviceId: string; request: string; salt: string };
    expect(inputs).toEqual({ sellerId: V.commitment.sellerId, serviceId: V.commitment.serviceId, request: V.commitment.request, salt: V.commitment.salt });
    row('requestHash', V.commitment.requestHash, requestCommitment(inputs));
    // chainId 1337, nonce 0, fee 4900, payTo `11` × 20 (`tnative1…`), amount 200000, no key
    const inv = /^chainId (\d+), nonce (\d+), fee (\d+), payTo `([0-9a-f]+)` × (\d+) \(`(tnative1\w+)`\), amount (\d+), (no key|with the key)$/.exec(rows.get('invoke')!);
    expect(inv).not.toBeNull();
    const [, chainId, nonce, fee, payByte, payCount, payToAddress, amount, keyNote] = inv!;
    expect({ chainId: Number(chainId), nonce, fee, payTo: payByte!.repeat(Number(payCount)), payToAddress, amount, includeKey: keyNote === 'with the key', serviceId: inputs.serviceId }).toEqual(V.invoke);
    expect(encodeAddress(fromHex(V.invoke.payTo), 'tnative')).toBe(V.invoke.payToAddress);
    row('payload (75 bytes)', V.payload, toHex(unsigned.payload));
    expect(V.payload.length / 2).toBe(75);
    // `01` `39050000` `02` ‹from› `00` `a426` `4b` ‹payload› `00`: each field as the code writes it.
    const unsignedCell = rows.get('unsigned (106 bytes)')!;
    const parts = unsignedCell.split(/\s+/).map((p) => (p === '‹payload›' ? V.payload : /^`([0-9a-f]+)`$/.exec(p)?.[1]));
    expect(parts.every((p) => p !== undefined)).toBe(true);
    expect(parts.join('')).toBe(V.unsigned);
    expect(V.unsigned.length / 2).toBe(106);
    const w = () => new Writer();
    expect(parts).toEqual([
      toHex(w().u8(TX_VERSION).finish()), toHex(w().u32(V.invoke.chainId).finish()), toHex(w().u8(TxType.agent_invoke).finish()), toHex(key.address),
      toHex(w().varint(BigInt(V.invoke.nonce)).finish()), toHex(w().varint(BigInt(V.invoke.fee)).finish()), toHex(w().varint(unsigned.payload.length).finish()), V.payload, toHex(w().u8(0).finish()),
    ]);
    expect(toHex(encodeUnsignedTx(unsigned))).toBe(V.unsigned);
    row('sighash', V.sighash, toHex(txSighash(unsigned)));
    row('Ed25519 signature', V.ed25519Signature, toHex(tx.signature.ed25519));
    row('sha256 of the ML-DSA-87 signature', V.mldsaSignatureSha256, toHex(sha256(tx.signature.mldsa)));
    row('txId', V.txId, toHex(txId(signed)));
    expect(toHex(signed)).toBe(V.tx);
  });
});

import { describe, expect, test } from '@jest/globals';
import { TxErrorCode } from '../../consensus/errors.js';
import { MAX_AMOUNT } from '../../consensus/amount.js';
import { balanceOf, credit, debit, move, NATIVE } from '../../consensus/ledger.js';
import { StateOverlay } from '../../consensus/state.js';
import { codeOf } from '../helpers/codes.js';

const alice = new Uint8Array(20).fill(1);
const bob = new Uint8Array(20).fill(2);

describe('balance-move rules', () => {
  test('a move debits then credits, to self included', () => {
    const s = new StateOverlay({ get: () => undefined });
    credit(s, alice, NATIVE, 100n);
    move(s, alice, bob, NATIVE, 40n);
    move(s, bob, bob, NATIVE, 40n);
    expect([balanceOf(s, alice, NATIVE), balanceOf(s, bob, NATIVE)]).toEqual([60n, 40n]);
  });

  test('a debit below zero is tx_insufficient_funds and changes nothing', () => {
    const s = new StateOverlay({ get: () => undefined });
    credit(s, alice, NATIVE, 10n);
    expect(codeOf(() => move(s, alice, bob, NATIVE, 11n))).toBe(TxErrorCode.INSUFFICIENT_FUNDS);
    expect(codeOf(() => debit(s, alice, 'TOK', 1n))).toBe(TxErrorCode.INSUFFICIENT_FUNDS);
    expect([balanceOf(s, alice, NATIVE), balanceOf(s, bob, NATIVE)]).toEqual([10n, 0n]);
  });

  test('a credit past 2^64 - 1 is tx_amount_overflow', () => {
    const s = new StateOverlay({ get: () => undefined });
    credit(s, alice, NATIVE, MAX_AMOUNT);
    expect(codeOf(() => credit(s, alice, NATIVE, 1n))).toBe(TxErrorCode.AMOUNT_OVERFLOW);
    expect(codeOf(() => credit(s, bob, 'TOK', MAX_AMOUNT))).toBeUndefined();
    expect(codeOf(() => credit(s, bob, 'TOK', 1n))).toBe(TxErrorCode.AMOUNT_OVERFLOW);
  });
});

/**
 * native-world-clock answers with the zone asked for (not ICU's canonical link target) and the
 * tz database's abbreviations, checked against `date +%Z` of the machine's tzdata.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from '@jest/globals';
import { parsePosixTz } from '../../services/world-clock.js';
import { callLocal } from './local.js';

const WINTER = Date.UTC(2027, 0, 12, 13, 46, 40);
const SUMMER = Date.UTC(2027, 6, 12, 13, 46, 40);
const ZONES = ['Asia/Kolkata', 'Asia/Calcutta', 'Asia/Kathmandu', 'Europe/Berlin', 'Europe/London', 'Europe/Dublin', 'America/St_Johns', 'America/New_York',
  'Australia/Sydney', 'Australia/Adelaide', 'Pacific/Auckland', 'Asia/Tokyo', 'Africa/Johannesburg', 'America/Sao_Paulo', 'Asia/Dubai', 'UTC', 'Etc/GMT+5'];

/** `TZ=zone date +%Z` at `ms`: the reference. */
function dateAbbreviation(zone: string, ms: number): string {
  return execFileSync('date', ['-d', `@${Math.floor(ms / 1000)}`, '+%Z'], { env: { TZ: zone } }).toString().trim();
}

describe('native-world-clock', () => {
  it('answers Asia/Kolkata and Asia/Kathmandu as asked, not as the legacy link names', async () => {
    expect((await callLocal('native-world-clock', 'Asia/Kolkata')).timezone).toBe('Asia/Kolkata');
    expect((await callLocal('native-world-clock', 'Asia/Kathmandu')).timezone).toBe('Asia/Kathmandu');
    expect((await callLocal('native-world-clock', 'asia/kolkata')).timezone).toBe('Asia/Kolkata');
    expect((await callLocal('native-world-clock', 'Asia/Calcutta')).timezone).toBe('Asia/Calcutta');
  });

  it.each(ZONES)('abbreviation of %s is the one date +%%Z prints, winter and summer', async (zone) => {
    for (const at of [WINTER, SUMMER]) {
      const r = await callLocal('native-world-clock', zone, { now: () => at });
      expect(`${zone} ${r.abbreviation}`).toBe(`${zone} ${dateAbbreviation(zone, at)}`);
    }
  });

  it('reads POSIX TZ rules with negative DST and bracketed names', () => {
    expect(parsePosixTz('IST-1GMT0,M10.5.0,M3.5.0/1')).toEqual({ std: { abbr: 'IST', offsetMinutes: 60 }, dst: { abbr: 'GMT', offsetMinutes: 0 } });
    expect(parsePosixTz('<+0545>-5:45')).toEqual({ std: { abbr: '+0545', offsetMinutes: 345 } });
    expect(parsePosixTz('NST3:30NDT,M3.2.0,M11.1.0')).toEqual({ std: { abbr: 'NST', offsetMinutes: -210 }, dst: { abbr: 'NDT', offsetMinutes: -150 } });
  });
});

/** The market-data, EVM and AI providers' settings: defaults (public no-key endpoints, AI unset), each layer, validation, typing. */
import { expect, test } from '@jest/globals';
import { loadConfig } from '../../node/config.js';
import { defaultProvidersOptions, providersOptionsOf } from '../../services/providers/options.js';

test('defaults: the public endpoints; no LLM, translation or image provider', () => {
  const p = providersOptionsOf(loadConfig([], {}, { cwd: '/tmp' }).providers);
  expect(p.weather).toEqual({ ...defaultProvidersOptions.weather, apiKey: undefined });
  expect(p.fx).toEqual(defaultProvidersOptions.fx);
  expect(p.coins).toEqual({ ...defaultProvidersOptions.coins, apiKey: undefined });
  expect(p.evm).toEqual(defaultProvidersOptions.evm);
  expect(p.llm.url).toBeUndefined();
  expect(p.translate).toMatchObject({ kind: 'openai', url: undefined });
  expect(p.image).toMatchObject({ kind: 'openai', url: undefined });
});

test('flags, environment and file keys fill them; translation falls back to the LLM endpoint', () => {
  const c = loadConfig(
    ['--llm-url', 'http://127.0.0.1:11434/v1', '--llm-model', 'llama3.2', '--image-provider', 'a1111', '--image-url', 'http://127.0.0.1:7860'],
    { NATIVE_COINGECKO_API_KEY: 'CG-x', NATIVE_COINGECKO_API_KEY_HEADER: 'x-cg-pro-api-key', NATIVE_BASE_RPC_URL: 'https://base.example.org/rpc' },
    { cwd: '/tmp' },
  );
  const p = providersOptionsOf(c.providers);
  expect(p.llm).toEqual({ url: 'http://127.0.0.1:11434/v1', model: 'llama3.2', apiKey: undefined });
  expect(p.translate).toMatchObject({ kind: 'openai', url: 'http://127.0.0.1:11434/v1', model: 'llama3.2' });
  expect(p.image).toMatchObject({ kind: 'a1111', url: 'http://127.0.0.1:7860' });
  expect(p.coins).toMatchObject({ apiKey: 'CG-x', apiKeyHeader: 'x-cg-pro-api-key' });
  expect(p.evm.baseRpcUrl).toBe('https://base.example.org/rpc');
  const lt = providersOptionsOf(loadConfig(['--translate-provider', 'libretranslate', '--translate-url', 'http://127.0.0.1:5000', '--llm-url', 'http://127.0.0.1:1/v1'], {}, { cwd: '/tmp' }).providers);
  expect(lt.translate).toMatchObject({ kind: 'libretranslate', url: 'http://127.0.0.1:5000' });
});

test('bad values are config_invalid', () => {
  expect(() => loadConfig(['--image-provider', 'midjourney'], {}, { cwd: '/tmp' })).toThrow(expect.objectContaining({ code: 'config_invalid' }));
  expect(() => loadConfig([], { NATIVE_FX_URL: 'file:///etc/passwd' }, { cwd: '/tmp' })).toThrow(expect.objectContaining({ code: 'config_invalid' }));
});

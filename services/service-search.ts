/**
 * native-service-search: keyword or capability search over the service registry (id, name,
 * description, tags, category), services that can be bought now (services/availability.ts) first,
 * then ranked by how many query words match and where.
 */
import { defineService } from './define.js';
import { pureHealth } from './health.js';
import { priceFields } from './pricing.js';
import { availabilityOf, type Availability } from './availability.js';
import { requestIsRequired, type ServiceContext, type ServiceDefinition } from './types.js';

/** Most results returned. */
const MAX_RESULTS = 20;

const STOP_WORDS = new Set(['a', 'an', 'and', 'the', 'of', 'for', 'to', 'in', 'on', 'with', 'by', 'or', 'me', 'my', 'i', 'get', 'service', 'services']);

/** Lowercase words of a text, light plural stemming ("prices" → "price"). */
function words(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^a-z0-9%]+/)
    .filter((w) => w.length > 0)
    .map(stem);
}

function stem(w: string): string {
  if (w.length > 4 && w.endsWith('ies')) return `${w.slice(0, -3)}y`;
  if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss')) return w.slice(0, -1);
  return w;
}

/** Weight of an exact word hit and of a substring hit, per field. */
const FIELDS = [
  { field: 'id', exact: 6, partial: 3 },
  { field: 'name', exact: 5, partial: 2 },
  { field: 'tags', exact: 5, partial: 2 },
  { field: 'category', exact: 4, partial: 2 },
  { field: 'description', exact: 2, partial: 1 },
] as const;

type Field = (typeof FIELDS)[number]['field'];

function fieldWords(def: ServiceDefinition): Record<Field, string[]> {
  return {
    id: words(def.id.replace(/^native-/, '')),
    name: words(def.name),
    tags: def.tags.flatMap((t) => [stem(t.toLowerCase()), ...words(t)]),
    category: [stem(def.category), ...words(def.category)],
    description: words(def.description),
  };
}

/** Score of one service for the query words; undefined when nothing matches. */
function score(def: ServiceDefinition, query: string, terms: string[]): { score: number; matchedTerms: number; matchedFields: Field[] } | undefined {
  const fw = fieldWords(def);
  let total = 0;
  let matchedTerms = 0;
  const matchedFields = new Set<Field>();
  for (const t of terms) {
    let termScore = 0;
    for (const f of FIELDS) {
      const ws = fw[f.field];
      if (ws.includes(t)) termScore += f.exact;
      else if (t.length >= 3 && ws.some((w) => w.includes(t) || (w.length >= 4 && t.includes(w)))) termScore += f.partial;
      else continue;
      matchedFields.add(f.field);
    }
    if (termScore > 0) matchedTerms++;
    total += termScore;
  }
  const q = query.toLowerCase();
  const bare = def.id.replace(/^native-/, '');
  if (q === def.id || q === bare) total += 50;
  else if (q === def.name.toLowerCase()) total += 30;
  else if (q.includes(' ') && def.description.toLowerCase().includes(q)) total += 5;
  if (total === 0) return undefined;
  return { score: total, matchedTerms, matchedFields: [...matchedFields] };
}

async function run(ctx: ServiceContext, input: unknown) {
  const query = String(input).trim();
  const all = words(query);
  const meaningful = all.filter((w) => !STOP_WORDS.has(w));
  const terms = [...new Set(meaningful.length ? meaningful : all)];
  const hits = ctx.registry
    .list()
    .map((def) => ({ def, s: score(def, query, terms), a: availabilityOf(ctx, def) }))
    .filter((h): h is { def: ServiceDefinition; s: NonNullable<ReturnType<typeof score>>; a: Availability } => h.s !== undefined)
    // Services that can be bought now first (a down one answers 503), then more query words
    // matched, then the weighted score, then the cheaper service, then id.
    .sort((a, b) => Number(b.a.available) - Number(a.a.available) || b.s.matchedTerms - a.s.matchedTerms || b.s.score - a.s.score || (a.def.priceBase < b.def.priceBase ? -1 : a.def.priceBase > b.def.priceBase ? 1 : 0) || a.def.id.localeCompare(b.def.id));
  return {
    query,
    terms,
    total: hits.length,
    results: hits.slice(0, MAX_RESULTS).map((h, i) => ({
      rank: i + 1,
      serviceId: h.def.id,
      name: h.def.name,
      category: h.def.category,
      description: h.def.description,
      tags: [...h.def.tags],
      ...priceFields(h.def, ctx.nativeUsd),
      requestFormat: h.def.requestFormat,
      requestRequired: requestIsRequired(h.def),
      ...h.a,
      score: h.s.score,
      matchedTerms: h.s.matchedTerms,
      matchedFields: h.s.matchedFields,
    })),
  };
}

/** native-service-search. */
export const serviceSearch = defineService({
  id: 'native-service-search',
  name: 'Service Search',
  category: 'search',
  priceBase: 400_000n,
  description: 'keyword search over the service registry',
  tags: ['search', 'services', 'registry', 'discovery', 'catalog', 'capability'],
  requestFormat: 'keyword or capability, e.g. "gas fees" or "pdf invoice"',
  requestRequired: true,
  inputSchema: { type: 'string', minLength: 1, maxLength: 200, pattern: '[0-9A-Za-z]', description: 'Keyword or capability to look for (at least one letter or digit).' },
  run,
  health: pureHealth,
});

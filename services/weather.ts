/** native-weather: current weather plus 3-day forecast. Not runnable yet: it needs a weather provider (the node answers 503 service_unavailable). */
import { defineService } from './define.js';

/** native-weather. */
export const weather = defineService({
  id: 'native-weather',
  name: 'Weather',
  category: 'reports',
  priceBase: 300_000n,
  description: 'current weather plus 3-day forecast',
  tags: ['weather', 'forecast', 'temperature', 'city', 'climate'],
  requestFormat: 'city name (e.g. Berlin or "Paris, FR") or latitude,longitude (e.g. 52.52,13.40)',
  requestRequired: false,
  inputSchema: { type: 'string', maxLength: 100, pattern: '^([-+]?(90(\\.0+)?|[0-8]?[0-9](\\.[0-9]+)?)\\s*,\\s*[-+]?(180(\\.0+)?|(1[0-7][0-9]|[0-9]?[0-9])(\\.[0-9]+)?)|\\p{L}[\\p{L}\\p{M} .\'’-]{0,79}(,\\s*\\p{L}[\\p{L}\\p{M} .\'’-]{0,40})?)$', description: 'City name or latitude,longitude.' },
});

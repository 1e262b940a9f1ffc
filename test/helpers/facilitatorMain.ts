/**
 * Entry of the test facilitator as its own process (`node --import tsx facilitatorMain.ts`):
 * prints `{"msg":"listening","url":…}` on one line, stops on SIGTERM/SIGINT. The optional
 * `FACILITATOR_AUTH` ("Name: value") is the header every API request must carry.
 */
import { startTestFacilitator } from './facilitator.js';

const authText = process.env.FACILITATOR_AUTH;
const m = authText ? /^([^:]+):\s*(.*)$/.exec(authText) : null;
const facilitator = await startTestFacilitator(m ? { auth: [m[1], m[2]] } : {});
process.stdout.write(`${JSON.stringify({ msg: 'listening', url: facilitator.url })}\n`);
const stop = () => void facilitator.stop().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

/**
 * The rows of the PostgreSQL inbox's jobs (x402/providers/pgInbox.ts): the columns read, the
 * row-to-job mapping and the statement that expires open jobs.
 */
import type { InboxJob } from './inbox.js';

/** Channel of ended jobs (payload: the job id). */
export const INBOX_END_CHANNEL = 'native_inbox_end';

export interface JobRow {
  id: string;
  service_id: string;
  agent: string;
  status: InboxJob['status'];
  request: string | null;
  input: string | null;
  created_at: string;
  deadline: string;
  taken_at: string | null;
  answered_at: string | null;
  result: string | null;
  error: string | null;
}

export const JOB_COLUMNS = `id, service_id, agent, status, request, input::text AS input, created_at::text AS created_at, deadline::text AS deadline,
  taken_at::text AS taken_at, answered_at::text AS answered_at, result::text AS result, error::text AS error`;
export const OPEN = `status IN ('queued', 'taken')`;

export function jobOf(r: JobRow): InboxJob {
  return {
    id: r.id,
    serviceId: r.service_id,
    agent: r.agent,
    ...(r.request === null ? {} : { request: r.request }),
    input: r.input === null ? undefined : (JSON.parse(r.input) as unknown),
    createdAt: Number(r.created_at),
    deadline: Number(r.deadline),
    status: r.status,
    ...(r.taken_at === null ? {} : { takenAt: Number(r.taken_at) }),
    ...(r.answered_at === null ? {} : { answeredAt: Number(r.answered_at) }),
    ...(r.error === null ? {} : { error: JSON.parse(r.error) as { code: string; message: string } }),
  };
}

/**
 * An UPDATE that expires the open jobs matching `where` (over `j`, parameters from $4), counting a
 * failure per job in the stats and, with $3 true, marking their agents offline ($1 the error,
 * $2 the time). Returns the expired jobs' id, service_id and agent.
 */
export function expireStatement(where: string): string {
  return `WITH j AS (
      UPDATE inbox_jobs j SET status = 'expired', error = $1::jsonb, answered_at = $2 WHERE j.${OPEN} AND (${where}) RETURNING j.id, j.service_id, j.agent
    ), s AS (
      INSERT INTO inbox_stats AS st (service_id, failures) SELECT service_id, count(*) FROM j GROUP BY service_id
      ON CONFLICT (service_id) DO UPDATE SET failures = st.failures + EXCLUDED.failures
    ), a AS (
      INSERT INTO inbox_agents AS ag (agent, offline_at) SELECT DISTINCT agent, $2::bigint FROM j WHERE $3::boolean
      ON CONFLICT (agent) DO UPDATE SET offline_at = greatest(ag.offline_at, EXCLUDED.offline_at)
    ), n AS (
      SELECT pg_notify('${INBOX_END_CHANNEL}', id) FROM j
    )
    SELECT j.id, j.service_id, j.agent, (SELECT count(*) FROM n)::int AS notified FROM j`;
}

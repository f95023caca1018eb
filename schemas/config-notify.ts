// The config of what the fleet tells people who are away: who is @mentioned and which webhook is
// called when a human is needed (an escalation, a pause, a breaker trip), and where the final
// report goes. Kept apart from config.ts, which holds the work policy.
import { z } from "zod";

const login = z
  .string()
  .regex(/^@?[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/, 'expected a GitHub login such as "octocat" (a leading "@" is allowed)')
  .transform((s) => s.replace(/^@/, ""));

export const NotifySchema = z
  .strictObject({
    mention: z
      .array(login)
      .max(10)
      .default(() => [])
      .describe("GitHub logins to @mention when the fleet needs a human: in the escalation comment, and in a comment on the issue of a quota, login or network pause or of a circuit breaker trip. GitHub pushes a mention to their phones; an edit never notifies, so these are new comments."),
    webhook_url: z
      .url({ protocol: /^https?$/ })
      .nullable()
      .default(null)
      .describe('A URL that gets the same events as a JSON POST: `{"text": …, "event": …, "repo": …, "issue": …, "at": …}`, Slack-compatible (`text`). A timeout or a 5xx answer is retried with backoff; the fleet never waits for it. The URL is never logged.'),
    dedupe_seconds: z
      .number()
      .int()
      .min(0)
      .max(604_800)
      .default(3600)
      .describe("The same event (one issue's escalation, one kind of pause, a breaker trip) is told at most once in this long."),
    max_per_hour: z
      .number()
      .int()
      .min(1)
      .max(1000)
      .default(20)
      .describe("At most this many notifications (mention comments and webhook posts together) per hour; the rest are counted in the supervisor lane and dropped."),
  })
  .describe("Who is told when the fleet needs a human.");

export const ReportSchema = z
  .strictObject({
    comment_issue: z
      .number()
      .int()
      .positive()
      .nullable()
      .default(null)
      .describe("An issue number: when a drain or stop ends, the final report (per issue: outcome, attempts, time, spend; the totals and requests spent) is posted there as a comment. `null`: written to the state directory only (`afk-mcp report`)."),
  })
  .describe("The final report written when a drain or stop ends.");

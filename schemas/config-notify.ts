// The config of what the fleet tells people who are away: who is @mentioned and which webhook is
// called when a human is needed (an escalation, a pause, a breaker trip), and the issue the final
// report is posted on. Kept apart from config.ts, which holds the work policy. Checks are
// refinements, not patterns, and "" or 0 means off (no `null` branch), to keep project_start's
// advertised schema small (the tools/list budget in test/mcp.test.ts).
import { z } from "zod";

const LOGIN = /^@?[A-Za-z0-9][A-Za-z0-9-]{0,38}$/;

export const NotifySchema = z
  .strictObject({
    mention: z
      .array(z.string().refine((l) => LOGIN.test(l), 'expected a GitHub login such as "octocat" (a leading "@" is allowed)'))
      .refine((logins) => logins.length <= 10, "at most 10 logins")
      .default(() => [])
      .describe("GitHub logins @mentioned (in a new comment, which GitHub pushes) on an escalation, a quota or login pause, a breaker trip."),
    webhook_url: z
      .string()
      .refine((url) => url === "" || (/^https?:\/\/[^\s]+$/.test(url) && URL.canParse(url)), 'expected an http(s) URL, or "" for none')
      .default("")
      .describe("Empty: none. Gets the same events as a JSON POST with a Slack-compatible `text`; retried with backoff, never waited on, never logged."),
    report_issue: z
      .number()
      .int()
      .min(0)
      .default(0)
      .describe("An issue the final report is posted on when a drain or stop ends (0: the state dir only, `afk-mcp report`)."),
  })
  .describe("Who is told when a human is needed, and where the final report goes.");

/** The same event (one issue's escalation, one kind of pause, a breaker trip) is told at most once in this long. */
export const NOTIFY_DEDUPE_SECONDS = 3600;
/** At most this many notifications (mention comments and webhook posts together) per hour. */
export const NOTIFY_MAX_PER_HOUR = 20;

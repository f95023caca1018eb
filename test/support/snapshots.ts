// Builders of snapshot pieces for tests of the core: a ready issue with overridable fields.
import type { SnapshotIssue } from "../../server/state/snapshot.js";

export function snapshotIssue(number: number, over: Partial<SnapshotIssue> = {}): SnapshotIssue {
  return {
    number,
    id: 1000 + number,
    title: `issue ${number}`,
    body: "",
    labels: ["ready-for-agent"],
    author: "alice",
    assignees: [],
    milestone: null,
    blockedBy: [],
    subIssues: [],
    parent: null,
    ...over,
  };
}

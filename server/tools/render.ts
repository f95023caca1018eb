// Text renderings shared by the project tools.
import { renderPlan, type ProjectResult } from "../host/api.js";

export function renderProject(result: ProjectResult): string {
  const lines = [result.message];
  const r = result.registration;
  if (r) {
    lines.push(`registration: ${r.repo}, instance ${r.instance}, target ${r.target}, base ${r.base}, merges ${r.merges}`, `worker: ${r.worker_command}`);
  }
  if (result.plan) lines.push("", renderPlan(result.plan));
  return lines.join("\n");
}

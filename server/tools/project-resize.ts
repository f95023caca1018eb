// `project_resize`: change a running project's width, worker command or selectors; applied at
// the next birth (running workers are left alone).
import { projectChangeOutput, projectResizeInput } from "../../schemas/tools.js";
import { defineTool } from "./define.js";
import { changeAnswer, renderProject } from "./render.js";

export const projectResizeTool = defineTool({
  name: "project_resize",
  title: "Resize or re-aim a running fleet",
  description:
    "Changes the target width, the worker command or the ordered selectors of a running project. Applied at the next worker birth; running workers finish as they are.",
  kind: "update",
  idempotent: true,
  input: projectResizeInput,
  output: projectChangeOutput,
  handler: async (host, args) => changeAnswer(await host.resize(args)),
  render: renderProject,
});

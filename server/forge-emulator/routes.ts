// The whole REST surface, assembled in one place. Order matters only where a literal segment
// could be read as a parameter ("/issues/comments" before "/issues/{issue_number}").
import { registerActionsRoutes } from "./actions-routes.js";
import { registerActivityRoutes } from "./activity.js";
import { registerCheckRoutes } from "./checks.js";
import { registerCommentRoutes } from "./comments.js";
import { registerGraphQLRoutes } from "./graphql.js";
import { registerIssueRoutes } from "./issues.js";
import { registerLabelRoutes } from "./labels.js";
import { registerMergeRoutes } from "./merge.js";
import { registerProtectionRoutes } from "./protection.js";
import { registerPullRoutes } from "./pulls.js";
import { registerRefRoutes } from "./refs.js";
import { registerRelationRoutes } from "./relations.js";
import { registerRepoRoutes } from "./repo.js";
import { registerReviewCommentRoutes } from "./review-comments.js";
import { registerReviewRoutes } from "./reviews.js";
import { Router } from "./router.js";

export function buildRouter(): Router {
  const router = new Router();
  registerRepoRoutes(router);
  registerActivityRoutes(router);
  registerCommentRoutes(router);
  registerIssueRoutes(router);
  registerRelationRoutes(router);
  registerLabelRoutes(router);
  registerRefRoutes(router);
  registerPullRoutes(router);
  registerMergeRoutes(router);
  registerReviewRoutes(router);
  registerReviewCommentRoutes(router);
  registerCheckRoutes(router);
  registerProtectionRoutes(router);
  registerGraphQLRoutes(router);
  registerActionsRoutes(router);
  return router;
}

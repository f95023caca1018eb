// GitHub's error bodies: `{message, documentation_url, status}`, and for bad input
// `{message: "Validation Failed", errors: [{resource, field, code}]}`. Handlers throw these;
// the server turns them into responses.

export const DOCS_URL = "https://docs.github.com/rest";

export interface ValidationItem {
  resource: string;
  code: "missing_field" | "invalid" | "already_exists" | "missing" | "unprocessable" | "custom";
  field?: string;
  value?: unknown;
  message?: string;
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  body(): Record<string, unknown> {
    return { message: this.message, ...this.extra, documentation_url: DOCS_URL, status: String(this.status) };
  }
}

export function notFound(): HttpError {
  return new HttpError(404, "Not Found");
}

export function validationFailed(errors: ValidationItem[], message = "Validation Failed"): HttpError {
  return new HttpError(422, message, errors.length > 0 ? { errors } : {});
}

export function missingField(resource: string, field: string): HttpError {
  return validationFailed([{ resource, field, code: "missing_field" }]);
}

export function invalidField(resource: string, field: string, value?: unknown): HttpError {
  return validationFailed([{ resource, field, code: "invalid", ...(value === undefined ? {} : { value }) }]);
}

export function unprocessable(message: string): HttpError {
  return new HttpError(422, message);
}

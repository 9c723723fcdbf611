import type { Reply } from '../shared/http.js';

/** A refusal the commerce sandbox answers with Magento's error body `{message, parameters?}`. */
export class MagentoError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly parameters?: unknown[] | Record<string, unknown>,
    readonly errors?: Array<{ message: string; parameters?: unknown[] | Record<string, unknown> }>,
  ) {
    super(message);
    this.name = 'MagentoError';
  }

  reply(): Reply {
    return magentoReply(this.status, this.message, this.parameters, this.errors);
  }
}

export function magentoReply(status: number, message: string, parameters?: unknown, errors?: unknown): Reply {
  return {
    status,
    json: { message, ...(parameters !== undefined ? { parameters } : {}), ...(errors !== undefined ? { errors } : {}) },
  };
}

/** Magento's own messages, word for word. */
export const MESSAGES = {
  signInIncorrect: 'The account sign-in was incorrect or your account is disabled temporarily. Please wait and try again later.',
  twoFactor: 'Please use the 2fa provider-specific endpoints to obtain a token.',
  unauthorized: "The consumer isn't authorized to access %resources.",
  noSuchEntity: "The entity that was requested doesn't exist. Verify the entity and try again.",
  inputErrors: 'One or more input exceptions have occurred.',
  required: '"%fieldName" is required. Enter and try again.',
  /** Magento 2.4.7 names the parameter: `{"parameters": {"max": 300}}`. */
  pageSizeCap: 'Maximum SearchCriteria pageSize is %max',
  noRoute: 'Request does not match any route.',
  invalidType: 'The "%value" value\'s type is invalid. The "%type" type was expected. Verify and try again.',
} as const;

export const SALES_RESOURCE = { resources: 'Magento_Sales::actions_view' };

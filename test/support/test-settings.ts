// The test apps' settings, read as a server reads its own environment (config.ts's loadConfig), so that
// every other setting is the server's default; the harness makes the apps from them.

/** Over the defaults: what a test app needs to differ in. */
export const TEST_ENV = {
  LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
  // A budget no test reaches, so that every answer carries the RateLimit fields and is checked against the document.
  RATE_LIMIT_PER_MINUTE: '1000000',
  // A company's share holds whether or not other companies are at work: tests of the share use one company.
  COMPANY_MAX_IN_FLIGHT: '8',
  COMPANY_MAX_IN_FLIGHT_ALONE: '8',
};

/** The application token of the test apps (Authorization: Bearer for /internal). */
export const APP_TOKEN = 'test-app-token-0123456789abcdef0123456789';

/**
 * The retry policy of test apps: a short schedule (three waits of a fraction of a second), disabling
 * after a minute; shorter than WEBHOOK_RETRY_SCHEDULE can say (whole seconds), so given to the apps as is.
 */
export const TEST_RETRY_POLICY = { schedule: [200, 200, 200], disableAfterMs: 60_000 };

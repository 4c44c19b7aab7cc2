import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('webhook configuration', () => {
  it('allows no private network, waits 10 s and runs 32 deliveries at once by default', () => {
    const config = loadConfig({});
    expect(config.webhookAllowedCidrs).to.deep.equal([]);
    expect(config.webhookTimeoutMs).to.equal(10_000);
    expect(config.webhookMaxInFlight).to.equal(32);
    expect(config.webhookMaxInFlightPerCompany).to.equal(4);
  });

  it('reads WEBHOOK_ALLOWED_CIDRS as comma-separated IPv4 and IPv6 CIDRs', () => {
    const config = loadConfig({ WEBHOOK_ALLOWED_CIDRS: ' 127.0.0.1/32, 10.0.0.0/8,,fd00::/8 ' });
    expect(config.webhookAllowedCidrs).to.deep.equal(['127.0.0.1/32', '10.0.0.0/8', 'fd00::/8']);
  });

  it('refuses an entry that is not a CIDR, naming the variable and the entry', () => {
    for (const bad of ['127.0.0.1', '127.0.0.1/33', 'localhost/32', '10.0.0.0/8/1', '::1/129', '10.0.0.0/x']) {
      expect(() => loadConfig({ WEBHOOK_ALLOWED_CIDRS: `192.168.0.0/16,${bad}` }), bad).to.throw(
        ConfigError,
        `WEBHOOK_ALLOWED_CIDRS must be a comma-separated list of CIDRs such as 127.0.0.1/32,10.0.0.0/8; "${bad}" is not one`,
      );
    }
  });

  it('reads WEBHOOK_TIMEOUT_MS and refuses values that are not a sensible number of milliseconds', () => {
    expect(loadConfig({ WEBHOOK_TIMEOUT_MS: '2500' }).webhookTimeoutMs).to.equal(2500);
    for (const bad of ['0', '99', '60001', '1.5', 'ten']) {
      expect(() => loadConfig({ WEBHOOK_TIMEOUT_MS: bad }), bad).to.throw(
        ConfigError,
        /^WEBHOOK_TIMEOUT_MS must be an integer from 100 to 60000/,
      );
    }
  });

  it('reads WEBHOOK_MAX_IN_FLIGHT and refuses what is not a positive integer', () => {
    expect(loadConfig({ WEBHOOK_MAX_IN_FLIGHT: '2' }).webhookMaxInFlight).to.equal(2);
    for (const bad of ['0', '-1', '10001', '1.5', 'many']) {
      expect(() => loadConfig({ WEBHOOK_MAX_IN_FLIGHT: bad }), bad).to.throw(
        ConfigError,
        /^WEBHOOK_MAX_IN_FLIGHT must be an integer from 1 to 10000/,
      );
    }
  });

  it('reads WEBHOOK_MAX_IN_FLIGHT_PER_COMPANY, 4 by default or all places when there are fewer', () => {
    expect(loadConfig({ WEBHOOK_MAX_IN_FLIGHT_PER_COMPANY: '7' }).webhookMaxInFlightPerCompany).to.equal(7);
    expect(
      loadConfig({ WEBHOOK_MAX_IN_FLIGHT: '8', WEBHOOK_MAX_IN_FLIGHT_PER_COMPANY: '8' }).webhookMaxInFlightPerCompany,
    ).to.equal(8);
    expect(loadConfig({ WEBHOOK_MAX_IN_FLIGHT: '2' }).webhookMaxInFlightPerCompany).to.equal(2);
    for (const bad of ['0', '-1', '10001', '1.5', 'many']) {
      expect(() => loadConfig({ WEBHOOK_MAX_IN_FLIGHT_PER_COMPANY: bad }), bad).to.throw(
        ConfigError,
        /^WEBHOOK_MAX_IN_FLIGHT_PER_COMPANY must be an integer from 1 to 10000/,
      );
    }
  });

  it('refuses a WEBHOOK_MAX_IN_FLIGHT_PER_COMPANY above WEBHOOK_MAX_IN_FLIGHT, naming both', () => {
    expect(() => loadConfig({ WEBHOOK_MAX_IN_FLIGHT: '8', WEBHOOK_MAX_IN_FLIGHT_PER_COMPANY: '9' })).to.throw(
      ConfigError,
      'WEBHOOK_MAX_IN_FLIGHT_PER_COMPANY must be at most WEBHOOK_MAX_IN_FLIGHT (8), got "9": a company\'s share is part of the process\'s places',
    );
    expect(() => loadConfig({ WEBHOOK_MAX_IN_FLIGHT_PER_COMPANY: '33' })).to.throw(
      ConfigError,
      /^WEBHOOK_MAX_IN_FLIGHT_PER_COMPANY must be at most WEBHOOK_MAX_IN_FLIGHT \(32\)/,
    );
  });

  it('retries on the Standard Webhooks schedule by default, disables after 5 days, keeps events 30 days', () => {
    const config = loadConfig({});
    const [s, m, h] = [1_000, 60_000, 3_600_000];
    expect(config.webhookRetrySchedule).to.deep.equal([
      5 * s,
      5 * m,
      30 * m,
      2 * h,
      5 * h,
      10 * h,
      14 * h,
      20 * h,
      24 * h,
    ]);
    expect(config.webhookDisableAfterMs).to.equal(5 * 24 * h);
    expect(config.eventRetentionMs).to.equal(30 * 24 * h);
    expect(config.webhookRetryPollMs).to.equal(1_000);
    expect(config.webhookWorker).to.equal(true);
  });

  it('reads WEBHOOK_RETRY_SCHEDULE, WEBHOOK_DISABLE_AFTER and EVENT_RETENTION with their units', () => {
    const config = loadConfig({
      WEBHOOK_RETRY_SCHEDULE: '1s, 2m,3h,1d',
      WEBHOOK_DISABLE_AFTER: '12h',
      EVENT_RETENTION: '7d',
    });
    expect(config.webhookRetrySchedule).to.deep.equal([1_000, 120_000, 10_800_000, 86_400_000]);
    expect(config.webhookDisableAfterMs).to.equal(43_200_000);
    expect(config.eventRetentionMs).to.equal(604_800_000);
  });

  it('refuses a schedule with no unit, a zero, an empty entry or a word, naming the variable', () => {
    for (const bad of ['5', '5s,0m', '5s,,5m', '5s,', 'soon', '5x', '-5s', '1.5h']) {
      expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: bad }), bad).to.throw(
        ConfigError,
        `WEBHOOK_RETRY_SCHEDULE must be a comma-separated list of at most 100 durations above zero, each a whole number with s, m, h or d (such as 5s,5m,30m,2h), got "${bad}"`,
      );
    }
    for (const name of ['WEBHOOK_DISABLE_AFTER', 'EVENT_RETENTION']) {
      for (const bad of ['5', '0d', 'never', '366d']) {
        expect(() => loadConfig({ [name]: bad }), `${name}=${bad}`).to.throw(
          ConfigError,
          new RegExp(`^${name} must be a duration`),
        );
      }
    }
  });

  it('refuses an EVENT_RETENTION not longer than the schedule, naming both', () => {
    expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: '1d,2d', EVENT_RETENTION: '3d' })).to.throw(
      ConfigError,
      'EVENT_RETENTION must be longer than WEBHOOK_RETRY_SCHEDULE\'s waits together (259200 s), got "3d": an event must outlive its attempts',
    );
    expect(() => loadConfig({ EVENT_RETENTION: '3d' })).to.throw(ConfigError, /^EVENT_RETENTION must be longer/);
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE: '1d,2d', EVENT_RETENTION: '4d' }).eventRetentionMs).to.equal(
      345_600_000,
    );
  });
});

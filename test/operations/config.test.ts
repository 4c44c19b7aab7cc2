import { availableParallelism } from 'node:os';
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config.js';
import { createPool } from '../../src/db/pool.js';
import { APP_TOKEN, databaseUrl } from '../support/harness.js';

const base = { DATABASE_URL: 'postgres://pgbouncer.internal:6432/intake', APP_TOKEN };

describe('operational configuration', () => {
  it('has defaults for the partner limits, reads them, and refuses values out of range', () => {
    expect(loadConfig(base)).to.include({
      rateLimitPerMinute: 600,
      companyMaxInFlight: 4,
      companyMaxInFlightAlone: 64,
      companyBytesInFlight: 1024 * 1024,
      bytesInFlight: 32 * 1024 * 1024,
    });
    expect(
      loadConfig({
        ...base,
        RATE_LIMIT_PER_MINUTE: '0',
        COMPANY_MAX_IN_FLIGHT: '3',
        COMPANY_BYTES_IN_FLIGHT: '2097152',
        BYTES_IN_FLIGHT: '4194304',
      }),
    ).to.include({
      rateLimitPerMinute: 0,
      companyMaxInFlight: 3,
      companyBytesInFlight: 2097152,
      bytesInFlight: 4194304,
    });
    expect(() => loadConfig({ ...base, RATE_LIMIT_PER_MINUTE: '-1' })).to.throw(
      ConfigError,
      /^RATE_LIMIT_PER_MINUTE must be/,
    );
    expect(() => loadConfig({ ...base, COMPANY_MAX_IN_FLIGHT: '0' })).to.throw(
      ConfigError,
      /^COMPANY_MAX_IN_FLIGHT must be/,
    );
    // Less than one whole body: a company could never send one.
    expect(() => loadConfig({ ...base, COMPANY_BYTES_IN_FLIGHT: '1000' })).to.throw(
      ConfigError,
      /^COMPANY_BYTES_IN_FLIGHT must be an integer from 1048576/,
    );
    expect(() => loadConfig({ ...base, BYTES_IN_FLIGHT: 'lots' })).to.throw(ConfigError, /^BYTES_IN_FLIGHT must be/);
  });

  it('leaves the validators to the first requests by default; WARM_VALIDATORS=true builds them at start', () => {
    expect(loadConfig(base).warmValidators).to.equal(false);
    expect(loadConfig({ ...base, WARM_VALIDATORS: 'true' }).warmValidators).to.equal(true);
    expect(() => loadConfig({ ...base, WARM_VALIDATORS: 'later' })).to.throw(ConfigError, /^WARM_VALIDATORS/);
  });

  it('has defaults for the database pool, its timeouts and the shutdown timeout', () => {
    expect(loadConfig(base)).to.include({
      migrationDatabaseUrl: undefined,
      databasePoolMax: 10,
      databaseConnectTimeoutMs: 5000,
      databaseStatementTimeoutMs: 4000,
      shutdownTimeoutMs: 10000,
    });
  });

  it('derives the statement timeout from the connect timeout, and refuses one the service would not wait for', () => {
    expect(loadConfig({ ...base, DATABASE_CONNECT_TIMEOUT_MS: '1000' })).to.include({
      databaseConnectTimeoutMs: 1000,
      databaseStatementTimeoutMs: 800,
    });
    expect(() =>
      loadConfig({ ...base, DATABASE_CONNECT_TIMEOUT_MS: '5000', DATABASE_STATEMENT_TIMEOUT_MS: '15000' }),
    ).to.throw(ConfigError, /^DATABASE_STATEMENT_TIMEOUT_MS must be 0 or below DATABASE_CONNECT_TIMEOUT_MS \(5000\)/);
  });

  it('reads them from the environment, a statement timeout of 0 included', () => {
    const config = loadConfig({
      ...base,
      DATABASE_MIGRATION_URL: 'postgresql://db.internal:5432/intake',
      DATABASE_POOL_MAX: '25',
      DATABASE_CONNECT_TIMEOUT_MS: '2000',
      DATABASE_STATEMENT_TIMEOUT_MS: '0',
      SHUTDOWN_TIMEOUT_MS: '25000',
    });
    expect(config).to.include({
      migrationDatabaseUrl: 'postgresql://db.internal:5432/intake',
      databasePoolMax: 25,
      databaseConnectTimeoutMs: 2000,
      databaseStatementTimeoutMs: 0,
      shutdownTimeoutMs: 25000,
    });
  });

  it('runs one worker with prepared statements by default; WEB_CONCURRENCY=auto is one per core', () => {
    expect(loadConfig(base)).to.include({ webConcurrency: 1, databasePreparedStatements: true });
    expect(loadConfig({ ...base, WEB_CONCURRENCY: '4', DATABASE_PREPARED_STATEMENTS: 'false' })).to.include({
      webConcurrency: 4,
      databasePreparedStatements: false,
    });
    expect(loadConfig({ ...base, WEB_CONCURRENCY: 'auto' }).webConcurrency).to.equal(availableParallelism());
  });

  it('refuses bad values, naming the variable', () => {
    const refused: [Record<string, string>, RegExp][] = [
      [{ DATABASE_POOL_MAX: '0' }, /^DATABASE_POOL_MAX must be an integer from 1 to 1000/],
      [{ DATABASE_CONNECT_TIMEOUT_MS: '5s' }, /^DATABASE_CONNECT_TIMEOUT_MS /],
      [{ DATABASE_STATEMENT_TIMEOUT_MS: '-1' }, /^DATABASE_STATEMENT_TIMEOUT_MS /],
      [{ SHUTDOWN_TIMEOUT_MS: '1e4' }, /^SHUTDOWN_TIMEOUT_MS /],
      [{ WEB_CONCURRENCY: '0' }, /^WEB_CONCURRENCY must be auto or an integer from 1 to 64, got "0"/],
      [{ WEB_CONCURRENCY: 'max' }, /^WEB_CONCURRENCY /],
      [{ DATABASE_PREPARED_STATEMENTS: 'no' }, /^DATABASE_PREPARED_STATEMENTS must be true or false/],
      [
        { DATABASE_MIGRATION_URL: 'mysql://db/intake' },
        /^DATABASE_MIGRATION_URL must be a postgres:\/\/ or postgresql:\/\/ URL/,
      ],
    ];
    for (const [env, message] of refused) {
      expect(() => loadConfig({ ...base, ...env }), JSON.stringify(env)).to.throw(ConfigError, message);
    }
    expect(() => loadConfig({ DATABASE_MIGRATION_URL: 'postgres://db/intake' })).to.throw(
      ConfigError,
      'DATABASE_MIGRATION_URL is only used together with DATABASE_URL',
    );
  });

  it('reads PUBLIC_BASE_URL without its trailing slash and TRUST_PROXY, and refuses what is no base URL', () => {
    expect(loadConfig(base)).to.include({ publicBaseUrl: undefined, trustProxy: false });
    expect(loadConfig({ ...base, PUBLIC_BASE_URL: 'https://api.example.com/intake/', TRUST_PROXY: 'true' })).to.include(
      {
        publicBaseUrl: 'https://api.example.com/intake',
        trustProxy: true,
      },
    );
    for (const url of [
      'api.example.com',
      'ftp://api.example.com',
      'https://api.example.com/?a=1',
      'https://u:p@x.io',
    ]) {
      expect(() => loadConfig({ ...base, PUBLIC_BASE_URL: url }), url).to.throw(
        ConfigError,
        /^PUBLIC_BASE_URL must be/,
      );
    }
    expect(() => loadConfig({ ...base, TRUST_PROXY: 'yes' })).to.throw(
      ConfigError,
      /^TRUST_PROXY must be true or false/,
    );
  });

  it('sets the statement timeout on every connection of the pool, and none for 0 (PgBouncer)', async () => {
    for (const [statementTimeoutMillis, expected] of [
      [2500, '2500ms'],
      [0, '0'],
    ] as const) {
      const db = createPool({ connectionString: databaseUrl(), statementTimeoutMillis });
      try {
        const { rows } = await db.query<{ statement_timeout: string }>('SHOW statement_timeout');
        expect(rows[0]!.statement_timeout).to.equal(expected);
      } finally {
        await db.end();
      }
    }
  });
});

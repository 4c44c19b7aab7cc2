import type { LookupFunction } from 'node:net';
import { expect } from 'chai';
import { embeddedIpv4Refusal, guardedAgent, refusedAddress } from '../../src/integrations/webhooks/address-guard.js';

describe('the webhook address guard: IPv4 inside IPv6', () => {
  it('judges an IPv6 transition address by the IPv4 address it embeds', () => {
    const refused = ['::7f00:1', '::ffff:a00:1', '64:ff9b::a9fe:a9fe', '2002:c0a8:101::1', '::ffff:100.64.0.1'];
    for (const address of refused) expect(embeddedIpv4Refusal(address, []), address).to.be.an('error');
    const passed = ['::ffff:808:808', '64:ff9b::808:808', '2002:808:808::1', '2606:4700::1111', '8.8.8.8', '10.0.0.1'];
    for (const address of passed) expect(embeddedIpv4Refusal(address, []), address).to.equal(undefined);
  });

  it('lets an embedded address through when WEBHOOK_ALLOWED_CIDRS allows its IPv4 network', () => {
    expect(embeddedIpv4Refusal('::ffff:7f00:1', ['127.0.0.1/32'])).to.equal(undefined);
    expect(embeddedIpv4Refusal('64:ff9b::a00:5', ['10.0.0.0/8', 'fd00::/8'])).to.equal(undefined);
    expect(embeddedIpv4Refusal('64:ff9b::a00:5', ['127.0.0.1/32'])).to.be.an('error');
  });

  it('refuses a name that resolves to such an address, at connect time', async () => {
    const agent = await guardedAgent({ allowedCidrs: [] });
    // The resolver answers as DNS would for a name pointing at [::127.0.0.1].
    const lookup = ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) =>
      options.all
        ? callback(null, [{ address: '::7f00:1', family: 6 }])
        : callback(null, '::7f00:1', 6)) as LookupFunction;
    const err = await new Promise<Error>((resolve) => {
      const socket = agent.createConnection({ host: 'receiver.example', port: 443, lookup }, (error) => {
        if (error) resolve(error);
      });
      socket.once('error', resolve);
    });
    expect(refusedAddress(err)).to.equal('::7f00:1');
    agent.destroy();
  });
});

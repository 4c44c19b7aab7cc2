import { generate } from 'selfsigned';

/**
 * A self-signed certificate (EC P-256) for https://localhost and https://127.0.0.1: for the local
 * webhook receiver and the tests' HTTPS receiver, valid for a year (selfsigned's default).
 */
export async function localhostCertificate(): Promise<{ key: string; cert: string }> {
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    extensions: [
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  });
  return { key: pems.private, cert: pems.cert };
}

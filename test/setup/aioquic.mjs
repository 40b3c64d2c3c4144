// Brings a real QUIC / HTTP/3 client to this machine for the protocol tests: npm has none that
// runs on Node 20, so it is aioquic from PyPI, in a virtual environment of its own outside the
// repository. pip installs exactly the wheels pinned below (each by version and sha256, with
// --require-hashes, no resolver, no source builds); the environment is made once and reused while
// its stamp matches these pins.
//
//   node test/setup/aioquic.mjs          # prints the environment's python, making it on the first run
import { ensurePinnedVenv, printWhenRun, venvDir } from './pinned-venv.mjs';

export const AIOQUIC_VERSION = '1.7.2';
/** aioquic and everything it needs, as PyPI served them for CPython 3.11 on manylinux x86_64 when they were pinned. */
const REQUIREMENTS = `${[
  'aioquic==1.7.2 --hash=sha256:4f85133486a7f39743acea265aa4a67696e0b4729864f747fc914a197210dfef',
  'attrs==26.1.0 --hash=sha256:c647aa4a12dfbad9333ca4e71fe62ddc36f4e63b2d260a37a8b83d2f043ac309',
  'certifi==2026.10.19.post1 --hash=sha256:1324c476b4811eff41a8bc2122cd0bbd4d9c7234c725446d99ab1612b3a7fdd2',
  'cffi==2.1.1 --hash=sha256:34e261f78cb6ceaaa36f42f2613f4380d94d9c759a9c73c769ee6e0247364632',
  'cryptography==50.0.2 --hash=sha256:9dab55f57c74c3cad24c323bacbbd04be4705ba6eb0d92e920b1fc4837ed5079',
  'pycparser==3.12 --hash=sha256:a076f3f489b39b43ed13563a1dafe42447445bec2e294154ec5c57fcdda4c85e',
  'pylsqpack==1.0.0 --hash=sha256:fdf021e7f188775033abe8e51bc3be1e7e30713de7a288afacf6354a5822afde',
  'pyopenssl==26.4.0 --hash=sha256:f0eb0cb2d581d3ad2b9c489468485e7f2ab6727d08401bcf9d824c3caddf3c1c',
  'service-identity==26.1.0 --hash=sha256:68c32dadbb69135fb951077677e07cd7f6031020f3a8c8f47a28cda8a0742118',
  'typing-extensions==4.16.0 --hash=sha256:481caa481374e813c1b176ada14e97f1f67a4539ce9cfeb3f350d78d6370c2e8',
].join('\n')}\n`;

/** The environment's python, after making it when it is missing or pinned otherwise. */
export function ensureAioquic({ log } = {}) {
  return ensurePinnedVenv(
    {
      dir: venvDir('esm-aioquic', AIOQUIC_VERSION, REQUIREMENTS),
      what: `aioquic==${AIOQUIC_VERSION}`,
      purpose: 'a QUIC / HTTP/3 client for the tests',
      requirements: REQUIREMENTS,
      // The wheels are built for CPython 3.11 (cffi's is not abi3): another Python cannot install them.
      pythonVersion: '3.11',
      versionCode: 'import aioquic; print(aioquic.__version__)',
      version: AIOQUIC_VERSION,
    },
    log,
  );
}

printWhenRun(import.meta, ensureAioquic);

import { startCoreInOffscreen } from '../../src/core/offscreen';

startCoreInOffscreen();

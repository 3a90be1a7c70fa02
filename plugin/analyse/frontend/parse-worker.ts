// Parses web/ files off the main thread (see parseInWorker in analyse.ts): [file, source] pairs in,
// their facts out, in the same order.
import { parentPort, workerData } from 'node:worker_threads';
import { analyseFile } from './parse.ts';

const { files } = workerData as { files: Array<[string, string]> };
parentPort!.postMessage(files.map(([file, source]) => analyseFile(file, source, null)));

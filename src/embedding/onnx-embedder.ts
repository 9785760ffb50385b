/**
 * The `onnx` provider is declared in the settings but not available in this build, and says
 * so at start-up instead of failing later at the first embedding.
 *
 * Why: the only maintained ONNX runtime for Node, `onnxruntime-node`, ships its CPU binaries
 * in a 113 MB package and runs a postinstall script that, on linux/x64, downloads the CUDA 12
 * execution provider from NuGet by default. The project takes no dependency that downloads
 * binaries at install time (and installs here run without install scripts). A sentence
 * embedding model also needs its tokenizer (WordPiece/BPE from tokenizer.json) in JS; both
 * are tracked in docs/markdown-adapters.md. Use `openai` against a local server (vLLM,
 * Ollama, text-embeddings-inference) for a real model meanwhile.
 */
import type { Embedder } from './embedder.js';

export function createOnnxEmbedder(options: { name: string; modelPath?: string | undefined }): Embedder {
  throw new Error(
    `embedding model ${options.name}: the onnx provider is not available in this build (no ONNX runtime is bundled: ` +
      'onnxruntime-node downloads binaries at install time). Serve the model behind an OpenAI-compatible endpoint ' +
      `and use provider openai, or use provider hash${options.modelPath ? ` (model_path ${options.modelPath} was not read)` : ''}`,
  );
}

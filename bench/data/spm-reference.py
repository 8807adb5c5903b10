# Reference token ids for src/tokens/spm.ts: Google SentencePiece (python3-sentencepiece from Debian)
# run on a BPE ModelProto rebuilt from a GGUF vocabulary dumped as {tokens, scores, types} JSON.
# Usage: python3 spm-reference.py VOCAB.json TEXTS.json > ids.json
import json, sys
from sentencepiece import sentencepiece_model_pb2 as pb
import sentencepiece as spm
v = json.load(open(sys.argv[1]))
m = pb.ModelProto()
m.trainer_spec.model_type = pb.TrainerSpec.BPE
m.trainer_spec.byte_fallback = True
m.trainer_spec.unk_id = 0; m.trainer_spec.bos_id = 1; m.trainer_spec.eos_id = 2; m.trainer_spec.pad_id = -1
m.normalizer_spec.name = 'identity'
m.normalizer_spec.add_dummy_prefix = True
m.normalizer_spec.remove_extra_whitespaces = False
m.normalizer_spec.escape_whitespaces = True
TYPES = {1: pb.ModelProto.SentencePiece.NORMAL, 2: pb.ModelProto.SentencePiece.UNKNOWN, 3: pb.ModelProto.SentencePiece.CONTROL,
         4: pb.ModelProto.SentencePiece.USER_DEFINED, 5: pb.ModelProto.SentencePiece.UNUSED, 6: pb.ModelProto.SentencePiece.BYTE}
for t, s, ty in zip(v['tokens'], v['scores'], v['types']):
    p = m.pieces.add(); p.piece = t; p.score = s; p.type = TYPES[ty]
sp = spm.SentencePieceProcessor(model_proto=m.SerializeToString())
texts = json.load(open(sys.argv[2]))
print(json.dumps([sp.encode(t) for t in texts]))

"""Planted candidate sets for the build tests: distinct base items in Lao, Vietnamese, Arabic and Thai,
and duplicates of known kind (exact, edit, spacing, Lao AM decomposition / Arabic diacritics, paraphrase).

`planted()` returns (rows, groups): rows as a candidate file holds them, and for each row the id of
the base item it duplicates (itself for a base item) with the kind of duplicate.
"""

from __future__ import annotations

# (question, options, paraphrase of the question or None)
LAO = [
    ("ນະຄອນຫຼວງຂອງປະເທດລາວແມ່ນເມືອງໃດ?", ["ວຽງຈັນ", "ຫຼວງພະບາງ", "ປາກເຊ", "ສະຫວັນນະເຂດ"],
     "ເມືອງຫຼວງຂອງລາວມີຊື່ວ່າຫຍັງ?"),
    ("ແມ່ນ້ຳຂອງໄຫຼຜ່ານທັງໝົດຈັກປະເທດ?", ["ສີ່", "ຫ້າ", "ຫົກ", "ເຈັດ"],
     "ມີຈັກປະເທດທີ່ແມ່ນ້ຳຂອງໄຫຼຜ່ານ?"),
    ("ບຸນປີໃໝ່ລາວກົງກັບເດືອນໃດຂອງປີ?", ["ມັງກອນ", "ເມສາ", "ກໍລະກົດ", "ທັນວາ"],
     "ປີໃໝ່ລາວຈັດຂຶ້ນໃນເດືອນຫຍັງ?"),
    ("ອາຫານປະຈຳຊາດຂອງລາວແມ່ນຫຍັງ?", ["ລາບ", "ເຝີ", "ຕົ້ມຍຳ", "ຂ້າວຜັດ"],
     "ອາຫານໃດເປັນອາຫານປະຈຳຊາດລາວ?"),
    ("ພະທາດຫຼວງຕັ້ງຢູ່ໃນນະຄອນໃດ?", ["ວຽງຈັນ", "ຫຼວງພະບາງ", "ຈຳປາສັກ", "ອັດຕະປື"], None),
    ("ພາສາລາວມີພະຍັນຊະນະທັງໝົດຈັກຕົວ?", ["ຊາວເຈັດ", "ສາມສິບສາມ", "ສີ່ສິບສີ່", "ຊາວ"], None),
    ("ເງິນກີບແມ່ນສະກຸນເງິນຂອງປະເທດໃດ?", ["ລາວ", "ໄທ", "ກຳປູເຈຍ", "ຫວຽດນາມ"], None),
    ("ຄົນລາວນິຍົມກິນເຂົ້າໜຽວດ້ວຍວິທີໃດ?", ["ດ້ວຍມື", "ດ້ວຍບ່ວງ", "ດ້ວຍໄມ້ທູ່", "ດ້ວຍສ້ອມ"], None),
    ("ສັດປະຈຳຊາດຂອງລາວແມ່ນສັດຫຍັງ?", ["ຊ້າງ", "ເສືອ", "ຄວາຍ", "ນົກຍູງ"], None),
    ("ນ້ຳຕົກຕາດຄອນພະເພັງຢູ່ແຂວງໃດ?", ["ຈຳປາສັກ", "ສາລະວັນ", "ເຊກອງ", "ອັດຕະປື"], None),
]
VI = [
    ("Thủ đô của Việt Nam là thành phố nào?", ["Hà Nội", "Huế", "Đà Nẵng", "Sài Gòn"],
     "Thành phố nào giữ vai trò thủ đô của nước Việt Nam?"),
    ("Sông nào dài nhất chảy qua lãnh thổ Việt Nam?", ["Sông Mê Kông", "Sông Hồng", "Sông Đà", "Sông Mã"],
     "Con sông dài nhất trên lãnh thổ Việt Nam là sông gì?"),
    ("Tết Nguyên Đán thường rơi vào tháng nào dương lịch?", ["Tháng một hoặc tháng hai", "Tháng năm", "Tháng tám", "Tháng mười hai"],
     "Theo dương lịch, Tết Nguyên Đán hay diễn ra vào tháng mấy?"),
    ("Món ăn nào nổi tiếng nhất của ẩm thực Hà Nội?", ["Phở", "Bánh xèo", "Hủ tiếu", "Cơm tấm"],
     "Trong ẩm thực Hà Nội, món nào được biết đến nhiều nhất?"),
    ("Vịnh Hạ Long thuộc tỉnh nào của Việt Nam?", ["Quảng Ninh", "Hải Phòng", "Thanh Hóa", "Nghệ An"], None),
    ("Chữ Quốc ngữ sử dụng bảng chữ cái nào làm nền tảng?", ["Latinh", "Hán", "Phạn", "Kirin"], None),
    ("Đỉnh núi cao nhất Việt Nam có tên là gì?", ["Fansipan", "Bà Đen", "Ngọc Linh", "Bạch Mã"], None),
    ("Việt Nam có bao nhiêu tỉnh và thành phố trực thuộc trung ương sau năm 2025?", ["34", "63", "58", "40"], None),
    ("Áo dài là trang phục truyền thống của dân tộc nào?", ["Người Việt", "Người Thái", "Người Chăm", "Người Khmer"], None),
    ("Ai là tác giả của Truyện Kiều?", ["Nguyễn Du", "Hồ Xuân Hương", "Nguyễn Trãi", "Tố Hữu"], None),
]
AR = [
    ("ما هي عاصمة جمهورية مصر العربية؟", ["القاهرة", "الإسكندرية", "أسوان", "الجيزة"],
     "أي مدينة تُعد العاصمة الرسمية لمصر؟"),
    ("ما هو أطول نهر في قارة أفريقيا؟", ["نهر النيل", "نهر الكونغو", "نهر النيجر", "نهر الزمبيزي"],
     "أي الأنهار يعتبر الأطول في أفريقيا؟"),
    ("في أي عام تأسست جامعة الدول العربية؟", ["1945", "1950", "1960", "1939"],
     "متى أُنشئت جامعة الدول العربية؟"),
    ("كم عدد حروف الأبجدية العربية؟", ["ثمانية وعشرون", "ستة وعشرون", "ثلاثون", "اثنان وثلاثون"],
     "ما عدد الحروف في الألفباء العربية؟"),
    ("من هو مؤلف كتاب مقدمة ابن خلدون؟", ["ابن خلدون", "ابن سينا", "الفارابي", "ابن رشد"], None),
    ("ما هي العملة الرسمية في المملكة المغربية؟", ["الدرهم", "الدينار", "الريال", "الجنيه"], None),
    ("أي بحر يقع بين شبه الجزيرة العربية وأفريقيا؟", ["البحر الأحمر", "البحر الأبيض المتوسط", "بحر العرب", "بحر قزوين"], None),
    ("ما هو أكبر صحراء حارة في العالم؟", ["الصحراء الكبرى", "صحراء الربع الخالي", "صحراء غوبي", "صحراء كالاهاري"], None),
    ("ما اسم الخط العربي الذي يستخدم في كتابة المصاحف غالبا؟", ["النسخ", "الرقعة", "الديواني", "الكوفي"], None),
    ("في أي مدينة يقع المسجد الأموي؟", ["دمشق", "بغداد", "القاهرة", "القدس"], None),
]
TH = [
    ("เมืองหลวงของประเทศไทยคือเมืองใด?", ["กรุงเทพมหานคร", "เชียงใหม่", "ภูเก็ต", "ขอนแก่น"],
     "เมืองใดเป็นเมืองหลวงของไทย?"),
    ("แม่น้ำสายใดไหลผ่านกรุงเทพมหานคร?", ["เจ้าพระยา", "ปิง", "โขง", "มูล"], None),
    ("อาหารไทยชนิดใดมีชื่อเสียงที่สุดในต่างประเทศ?", ["ต้มยำกุ้ง", "ข้าวเหนียว", "ส้มตำ", "แกงเขียวหวาน"], None),
    ("สัตว์ประจำชาติของไทยคือสัตว์ชนิดใด?", ["ช้าง", "เสือ", "ควาย", "นกยูง"], None),
]

_HARAKAT = {"ما": "مَا", "هي": "هِيَ", "هو": "هُوَ", "في": "فِي", "من": "مَنْ", "كم": "كَمْ", "أي": "أَيّ"}


def _edit(q: str, lang: str) -> str:
    """One small edit: a word or two changed, as a copy-editor would."""
    if lang in ("lo", "th"):
        return q.replace("?", "") + ("ແດ່?" if lang == "lo" else "บ้าง?")
    words = q.split()
    words.insert(len(words) // 2, "thực sự" if lang == "vi" else "حقا")
    return " ".join(words)


def _spacing(q: str, lang: str) -> str:
    if lang in ("lo", "th"):
        mid = len(q) // 2
        return q[:mid] + " " + q[mid:].replace("?", " ?")
    return "  ".join(q.split()).replace("?", " ?").replace("؟", " ؟")


def _script(q: str, lang: str) -> str | None:
    """Lao: AM decomposed (U+0ECD [tone] U+0EB2 for U+0EB3); Arabic: harakat added. Others: None."""
    if lang == "lo" and "\u0eb3" in q:
        import re
        return re.sub("([\u0ec8-\u0ecb]?)\u0eb3", lambda m: "\u0ecd" + m.group(1) + "\u0eb2", q)
    if lang == "ar":
        return " ".join(_HARAKAT.get(w, w) for w in q.split())
    return None


def mcq_text(q: str, options: list[str]) -> str:
    return q


def planted() -> tuple[list[dict], dict[str, tuple[str, str]]]:
    rows: list[dict] = []
    truth: dict[str, tuple[str, str]] = {}
    for lang, table in (("lo", LAO), ("vi", VI), ("ar", AR), ("th", TH)):
        for k, (q, opts, para) in enumerate(table):
            base = f"{lang}-{k}"
            rows.append({"id": base, "question": q, "options": opts, "answer": "A", "lang": lang})
            truth[base] = (base, "base")
            variants = [("exact", q), ("edit", _edit(q, lang)), ("spacing", _spacing(q, lang)),
                        ("script", _script(q, lang)), ("paraphrase", para)]
            for kind, text in variants:
                if text is None or (kind != "exact" and k >= 6):  # the last items keep only an exact copy
                    continue
                rid = f"{base}-{kind}"
                rows.append({"id": rid, "question": text, "options": opts, "answer": "A", "lang": lang})
                truth[rid] = (base, kind)
    return rows, truth


def pair_scores(clusters: list[list[str]], truth: dict[str, tuple[str, str]], kinds: set[str]) -> dict:
    """Pair-level precision and recall of clusters (lists of ids) against the planted groups, counting
    only duplicates of the given kinds as positives (others are left out of both counts)."""
    wanted = {i for i, (b, k) in truth.items() if k in kinds or k == "base"}
    group = {i: truth[i][0] for i in wanted}
    predicted = set()
    for c in clusters:
        members = sorted(i for i in c if i in wanted)
        predicted |= {(a, b) for x, a in enumerate(members) for b in members[x + 1:]}
    true = {(a, b) for a in group for b in group if a < b and group[a] == group[b]}
    tp = len(predicted & true)
    return {"precision": tp / len(predicted) if predicted else 1.0, "recall": tp / len(true) if true else 1.0,
            "true_pairs": len(true), "predicted_pairs": len(predicted)}

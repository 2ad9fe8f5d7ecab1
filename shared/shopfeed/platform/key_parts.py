"""Free text (a token's subject) inside a composite DynamoDB key, where ``#`` separates the parts.

``#`` and ``%`` are percent-encoded, nothing else: the encoding is injective (two texts never share an
encoding) and an encoded part holds no ``#``, so text can neither end its part early nor spell another
key. Text without either character is unchanged, so keys of plain ids read as before.
"""


def escape(text: str) -> str:
    return text.replace("%", "%25").replace("#", "%23")

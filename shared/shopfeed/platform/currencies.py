"""ISO 4217 currencies a price may be in: the codes of List One for currencies in circulation.

Left out: fund and accounting units (BOV, CHE, CHW, CLF, COU, MXV, USN, UYI, UYW, XDR, XSU, XUA, XB*),
precious metals (XAU, XAG, XPD, XPT), the test and no-currency codes (XTS, XXX) and codes withdrawn by
replacement (ANG → XCG, HRK and BGN → EUR, SLL → SLE, ZWL → ZWG, CUC, MRO, STD, VEF).
"""

from typing import Final

ISO_4217: Final = frozenset(
    # One block of text reads like the standard's table; a list literal would take 155 lines.
    """
    AED AFN ALL AMD AOA ARS AUD AWG AZN BAM BBD BDT BHD BIF BMD BND BOB BRL BSD BTN BWP BYN BZD CAD CDF
    CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ
    GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP
    LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR
    PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC
    SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD UYU UZS VED VES VND VUV WST XAF XCD XCG XOF
    XPF YER ZAR ZMW ZWG
    """.split()  # noqa: SIM905
)


def iso_4217(code: str) -> str:
    if code not in ISO_4217:
        raise ValueError("not an ISO 4217 currency in circulation")
    return code

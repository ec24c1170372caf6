// Generated from manifests/retention-sync.schema.json (a test keeps the two identical), so that
// `retention-sync init` can write the schema beside the manifests it creates.

/// The JSON Schema (draft 2020-12) of one manifest document, for editors with the YAML language server.
public enum ManifestSchema {
    /// The name the schema file has beside the manifests, as `$schema=` comments refer to it.
    public static let fileName = "retention-sync.schema.json"

    public static let json = #"""
{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "urn:retention-sync:manifest:v1",
  "title": "retention-sync manifest document",
  "description": "One document of a retention-sync manifest directory. Every document has apiVersion and kind; a file may hold several documents separated by ---.",
  "type": "object",
  "required": [
    "apiVersion",
    "kind"
  ],
  "properties": {
    "apiVersion": {
      "$ref": "#/$defs/apiVersion"
    },
    "kind": {
      "enum": [
        "App",
        "Image",
        "Message",
        "Defaults",
        "Flow"
      ],
      "description": "What the document declares."
    }
  },
  "allOf": [
    {
      "if": {
        "properties": {
          "kind": {
            "const": "App"
          }
        },
        "required": [
          "kind"
        ]
      },
      "then": {
        "$ref": "#/$defs/App"
      }
    },
    {
      "if": {
        "properties": {
          "kind": {
            "const": "Image"
          }
        },
        "required": [
          "kind"
        ]
      },
      "then": {
        "$ref": "#/$defs/Image"
      }
    },
    {
      "if": {
        "properties": {
          "kind": {
            "const": "Message"
          }
        },
        "required": [
          "kind"
        ]
      },
      "then": {
        "$ref": "#/$defs/Message"
      }
    },
    {
      "if": {
        "properties": {
          "kind": {
            "const": "Defaults"
          }
        },
        "required": [
          "kind"
        ]
      },
      "then": {
        "$ref": "#/$defs/Defaults"
      }
    },
    {
      "if": {
        "properties": {
          "kind": {
            "const": "Flow"
          }
        },
        "required": [
          "kind"
        ]
      },
      "then": {
        "$ref": "#/$defs/Flow"
      }
    }
  ],
  "$defs": {
    "apiVersion": {
      "const": "retention-sync/v1",
      "description": "The manifest format version."
    },
    "locale": {
      "enum": [
        "ar-SA",
        "ca",
        "cs",
        "da",
        "de-DE",
        "el",
        "en-AU",
        "en-CA",
        "en-GB",
        "en-US",
        "es-ES",
        "es-MX",
        "fi",
        "fr-CA",
        "fr-FR",
        "he",
        "hi",
        "hr",
        "hu",
        "id",
        "it",
        "ja",
        "ko",
        "ms",
        "nl-NL",
        "no",
        "pl",
        "pt-BR",
        "pt-PT",
        "ro",
        "ru",
        "sk",
        "sv",
        "th",
        "tr",
        "uk",
        "vi",
        "zh-Hans",
        "zh-Hant"
      ],
      "description": "An App Store Connect locale code, with a hyphen (en-US, not en_US)."
    },
    "productId": {
      "type": "string",
      "minLength": 1,
      "description": "An auto-renewable subscription's product id, declared in the App."
    },
    "messageName": {
      "type": "string",
      "pattern": "^[a-z0-9][a-z0-9-]*$",
      "description": "A Message's name: lowercase letters, digits and hyphens."
    },
    "starOrProducts": {
      "oneOf": [
        {
          "const": "*",
          "description": "Every product the App declares."
        },
        {
          "type": "array",
          "items": {
            "$ref": "#/$defs/productId"
          },
          "minItems": 1
        }
      ]
    },
    "starOrLocales": {
      "oneOf": [
        {
          "const": "*",
          "description": "Every locale the product declares."
        },
        {
          "type": "array",
          "items": {
            "$ref": "#/$defs/locale"
          },
          "minItems": 1
        }
      ]
    },
    "timestamp": {
      "type": "string",
      "format": "date-time",
      "description": "An RFC 3339 timestamp such as 2026-03-01T00:00:00Z."
    },
    "environmentSettings": {
      "type": "object",
      "additionalProperties": false,
      "properties": {
        "realtimeURL": {
          "type": "string",
          "pattern": "^https://",
          "maxLength": 256,
          "description": "The realtime endpoint Apple calls (https only, at most 256 characters)."
        },
        "snapshotPath": {
          "type": "string",
          "minLength": 1,
          "description": "Where the published runtime snapshot is stored, relative to the manifest directory."
        }
      }
    },
    "App": {
      "type": "object",
      "description": "The app: bundle id, environments and subscription products. Exactly one per directory.",
      "required": [
        "apiVersion",
        "kind",
        "bundleId",
        "environments",
        "products"
      ],
      "properties": {
        "apiVersion": {
          "$ref": "#/$defs/apiVersion"
        },
        "kind": {
          "const": "App"
        },
        "bundleId": {
          "type": "string",
          "minLength": 1,
          "description": "The app's bundle identifier."
        },
        "appAppleId": {
          "type": "integer",
          "minimum": 1,
          "description": "The app's Apple ID; the runtime checks realtime requests against it."
        },
        "identityNamespace": {
          "type": "string",
          "pattern": "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
          "description": "A UUID overriding retention-sync's fixed namespace for content identifiers."
        },
        "environments": {
          "type": "object",
          "additionalProperties": false,
          "minProperties": 1,
          "properties": {
            "sandbox": {
              "$ref": "#/$defs/environmentSettings"
            },
            "production": {
              "$ref": "#/$defs/environmentSettings"
            }
          }
        },
        "products": {
          "type": "array",
          "minItems": 1,
          "items": {
            "type": "object",
            "additionalProperties": false,
            "required": [
              "id",
              "locales"
            ],
            "properties": {
              "id": {
                "$ref": "#/$defs/productId"
              },
              "locales": {
                "type": "array",
                "minItems": 1,
                "uniqueItems": true,
                "items": {
                  "$ref": "#/$defs/locale"
                }
              }
            }
          }
        }
      },
      "additionalProperties": false
    },
    "Image": {
      "type": "object",
      "description": "A PNG image a message can show.",
      "required": [
        "apiVersion",
        "kind",
        "name",
        "file",
        "size"
      ],
      "properties": {
        "apiVersion": {
          "$ref": "#/$defs/apiVersion"
        },
        "kind": {
          "const": "Image"
        },
        "name": {
          "type": "string",
          "minLength": 1
        },
        "file": {
          "type": "string",
          "minLength": 1,
          "description": "The PNG file, relative to the manifest directory."
        },
        "size": {
          "enum": [
            "FULL_SIZE",
            "BULLET_POINT"
          ],
          "description": "FULL_SIZE: 3840 px wide, 160-2160 px high. BULLET_POINT: 1024 x 1024 px. Opaque RGB only."
        }
      },
      "additionalProperties": false
    },
    "Message": {
      "type": "object",
      "description": "A retention message, localized per locale.",
      "required": [
        "apiVersion",
        "kind",
        "name",
        "localizations"
      ],
      "properties": {
        "apiVersion": {
          "$ref": "#/$defs/apiVersion"
        },
        "kind": {
          "const": "Message"
        },
        "name": {
          "$ref": "#/$defs/messageName"
        },
        "product": {
          "$ref": "#/$defs/productId",
          "description": "Limits the message to one product."
        },
        "headerPosition": {
          "enum": [
            "ABOVE_BODY",
            "ABOVE_IMAGE"
          ],
          "description": "ABOVE_IMAGE needs an image in every localization."
        },
        "localizations": {
          "type": "object",
          "minProperties": 1,
          "propertyNames": {
            "$ref": "#/$defs/locale"
          },
          "additionalProperties": {
            "type": "object",
            "additionalProperties": false,
            "required": [
              "header",
              "body"
            ],
            "properties": {
              "header": {
                "type": "string",
                "minLength": 1,
                "maxLength": 66,
                "description": "At most 66 characters."
              },
              "body": {
                "type": "string",
                "minLength": 1,
                "maxLength": 144,
                "description": "At most 144 characters."
              },
              "image": {
                "type": "object",
                "additionalProperties": false,
                "required": [
                  "name",
                  "altText"
                ],
                "properties": {
                  "name": {
                    "type": "string",
                    "description": "A FULL_SIZE Image's name."
                  },
                  "altText": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 150,
                    "description": "At most 150 characters."
                  }
                }
              },
              "bulletPoints": {
                "type": "array",
                "maxItems": 5,
                "items": {
                  "type": "object",
                  "additionalProperties": false,
                  "required": [
                    "text",
                    "image",
                    "altText"
                  ],
                  "properties": {
                    "text": {
                      "type": "string",
                      "minLength": 1,
                      "maxLength": 66,
                      "description": "At most 66 characters."
                    },
                    "image": {
                      "type": "string",
                      "description": "A BULLET_POINT Image's name."
                    },
                    "altText": {
                      "type": "string",
                      "minLength": 1,
                      "maxLength": 150,
                      "description": "At most 150 characters."
                    }
                  }
                }
              }
            }
          }
        }
      },
      "additionalProperties": false
    },
    "Defaults": {
      "type": "object",
      "description": "The default message per product and locale.",
      "required": [
        "apiVersion",
        "kind",
        "defaults"
      ],
      "properties": {
        "apiVersion": {
          "$ref": "#/$defs/apiVersion"
        },
        "kind": {
          "const": "Defaults"
        },
        "defaults": {
          "type": "array",
          "items": {
            "type": "object",
            "additionalProperties": false,
            "required": [
              "products",
              "locales",
              "message"
            ],
            "properties": {
              "products": {
                "$ref": "#/$defs/starOrProducts"
              },
              "locales": {
                "$ref": "#/$defs/starOrLocales"
              },
              "message": {
                "$ref": "#/$defs/messageName"
              }
            }
          }
        }
      },
      "additionalProperties": false
    },
    "Flow": {
      "type": "object",
      "description": "Ordered realtime rules; the first rule that matches answers.",
      "required": [
        "apiVersion",
        "kind",
        "name",
        "rules"
      ],
      "properties": {
        "apiVersion": {
          "$ref": "#/$defs/apiVersion"
        },
        "kind": {
          "const": "Flow"
        },
        "name": {
          "type": "string",
          "minLength": 1
        },
        "localeFallbacks": {
          "type": "object",
          "additionalProperties": {
            "$ref": "#/$defs/locale"
          },
          "description": "Customer locales (keys) answered as an App Store locale (values), e.g. de-AT: de-DE."
        },
        "rules": {
          "type": "array",
          "minItems": 1,
          "items": {
            "type": "object",
            "additionalProperties": false,
            "required": [
              "name",
              "response"
            ],
            "properties": {
              "name": {
                "type": "string",
                "minLength": 1
              },
              "match": {
                "type": "object",
                "additionalProperties": false,
                "properties": {
                  "products": {
                    "type": "array",
                    "items": {
                      "$ref": "#/$defs/productId"
                    }
                  },
                  "locales": {
                    "type": "array",
                    "items": {
                      "$ref": "#/$defs/locale"
                    }
                  },
                  "environments": {
                    "type": "array",
                    "items": {
                      "enum": [
                        "sandbox",
                        "production"
                      ]
                    }
                  },
                  "window": {
                    "type": "object",
                    "additionalProperties": false,
                    "properties": {
                      "from": {
                        "$ref": "#/$defs/timestamp",
                        "description": "Inclusive start."
                      },
                      "until": {
                        "$ref": "#/$defs/timestamp",
                        "description": "Exclusive end."
                      }
                    }
                  },
                  "split": {
                    "type": "object",
                    "additionalProperties": false,
                    "required": [
                      "group",
                      "percent"
                    ],
                    "description": "A stable share of customers, by originalTransactionId; the rules of one group take consecutive shares.",
                    "properties": {
                      "group": {
                        "type": "string",
                        "minLength": 1
                      },
                      "percent": {
                        "type": "number",
                        "exclusiveMinimum": 0,
                        "maximum": 100
                      }
                    }
                  }
                }
              },
              "response": {
                "oneOf": [
                  {
                    "const": "none",
                    "description": "Answer nothing, so Apple shows the default message."
                  },
                  {
                    "type": "object",
                    "additionalProperties": false,
                    "minProperties": 1,
                    "maxProperties": 1,
                    "properties": {
                      "message": {
                        "$ref": "#/$defs/messageName"
                      },
                      "alternateProduct": {
                        "type": "object",
                        "additionalProperties": false,
                        "required": [
                          "message",
                          "productId"
                        ],
                        "properties": {
                          "message": {
                            "$ref": "#/$defs/messageName"
                          },
                          "productId": {
                            "$ref": "#/$defs/productId"
                          },
                          "billingPlanType": {
                            "enum": [
                              "BILLED_UPFRONT",
                              "MONTHLY"
                            ]
                          }
                        }
                      },
                      "promotionalOffer": {
                        "type": "object",
                        "additionalProperties": false,
                        "required": [
                          "message",
                          "offerIdentifier"
                        ],
                        "properties": {
                          "message": {
                            "$ref": "#/$defs/messageName"
                          },
                          "offerIdentifier": {
                            "type": "string",
                            "minLength": 1
                          }
                        }
                      }
                    }
                  }
                ]
              }
            }
          }
        }
      },
      "additionalProperties": false
    }
  }
}

"""#
}
